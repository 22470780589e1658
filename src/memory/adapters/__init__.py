"""Adapters: one package per technology, each implementing ports."""
