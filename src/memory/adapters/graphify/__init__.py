"""graphify adapter."""
