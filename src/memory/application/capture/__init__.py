"""Capturing: agents write and edit notes, checked, written, then indexed."""
