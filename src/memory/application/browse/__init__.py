"""Browsing: the indexed notes page by page and one note's text."""
