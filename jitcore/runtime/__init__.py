"""How calls reach compiled code: prologues, caches, dispatch, and sys.monitoring interception."""
