"""The graph within a scope: neighbours, paths and the picture."""
