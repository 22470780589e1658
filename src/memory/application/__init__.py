"""Use cases, one folder each: search/, refresh/, capture/, browse/, graph/; MemoryService
(service.py) is the one object the entry points call, health_check.py and evaluation.py the
two use cases small enough to be one module."""
