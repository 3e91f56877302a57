"""NetConfBench / NetConfArena compatibility: the task exchange format, tasks on the lab,
parameterized templates, their metrics and validated-run harvesting (issue 15)."""
