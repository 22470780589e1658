"""Graphify adapter: graph generations built by Graphify, and the GraphProvider reading them."""

from memory.adapters.graphify.generations import GraphifyGenerations, GraphifyStage
from memory.adapters.graphify.graph import GraphifyGraph

__all__ = ["GraphifyGenerations", "GraphifyGraph", "GraphifyStage"]
