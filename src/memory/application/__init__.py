"""Use cases: MemoryService (the eight operations), RetrievalEngine and Indexer."""
