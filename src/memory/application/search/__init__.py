"""Searching: the request, the engine that gathers and ranks, explain."""
