"""Developer tools: benchmarks (run as scripts) and the program generator of the differential tests (`tools.progen`)."""
