"""The artifact store's adapters: its SQLite database and the readers of each format."""
