"""Pure values and rules of ai-memory: notes, chunks, scopes, fusion, ranking, evidence."""
