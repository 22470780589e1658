"""Interfaces the application needs from the outside world, one role per module."""
