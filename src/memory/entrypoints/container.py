"""The composition root: which adapter plays which port, grouped by role."""

from __future__ import annotations

from pathlib import Path

from dependency_injector import containers, providers

from memory.adapters.embeddings import SentenceTransformerEmbedder
from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.sqlite import (SqliteChunkStore, SqliteEmbeddingCache, SqliteGenerations,
                                    SqliteIndex, SqliteVectorIndex)
from memory.adapters.statefiles import (FileRefreshLock, JsonlFeedbackLog, JsonlRefreshHistory,
                                        SystemClock)
from memory.application.indexer import Indexer
from memory.application.retrieval import RetrievalEngine, SearchConfig
from memory.application.service import MemoryService


def _models_dir(state_dir: str) -> str:
    return str(Path(state_dir) / "cache" / "models")


class Gateways(containers.DeclarativeContainer):
    """The real adapters: Markdown files, SQLite + sqlite-vec, MiniLM, Graphify, files."""

    config = providers.Configuration()
    source = providers.Singleton(MarkdownNoteSource, root=config.root)
    sqlite = providers.Singleton(SqliteIndex, state_dir=config.state_dir)
    index = providers.Singleton(SqliteGenerations, sqlite)
    chunks = providers.Singleton(SqliteChunkStore, sqlite)
    vectors = providers.Singleton(SqliteVectorIndex, sqlite)
    # The ONNX export of the model is cached beside the index (about 90 MB, made once).
    embedder = providers.Singleton(SentenceTransformerEmbedder,
                                   cache_dir=providers.Callable(_models_dir, config.state_dir))
    cache = providers.Singleton(SqliteEmbeddingCache, state_dir=config.state_dir)
    graph = providers.Singleton(GraphifyGraph, state_dir=config.state_dir)
    graphs = providers.Singleton(GraphifyGenerations, root=config.root, state_dir=config.state_dir)
    lock = providers.Singleton(FileRefreshLock, state_dir=config.state_dir)
    feedback = providers.Singleton(JsonlFeedbackLog, state_dir=config.state_dir)
    history = providers.Singleton(JsonlRefreshHistory, state_dir=config.state_dir)
    clock = providers.Singleton(SystemClock)


class UseCases(containers.DeclarativeContainer):
    """The application, wired to whatever gateways it is given (ports as dependencies)."""

    config = providers.Configuration()
    source = providers.Dependency()
    index = providers.Dependency()
    chunks = providers.Dependency()
    vectors = providers.Dependency()
    embedder = providers.Dependency()
    cache = providers.Dependency()
    graph = providers.Dependency()
    graphs = providers.Dependency()
    lock = providers.Dependency()
    feedback = providers.Dependency()
    history = providers.Dependency()
    clock = providers.Dependency()
    search_config = providers.Object(SearchConfig())
    default_repository = providers.Object(None)
    before_search = providers.Object(None)

    engine = providers.Singleton(
        RetrievalEngine, chunks=chunks, vectors=vectors, embedder=embedder, graph=graph,
        config=search_config, default_repository=default_repository,
        today=providers.Callable(lambda clock: (lambda: clock.now_iso()[:10]), clock))
    indexer = providers.Singleton(
        Indexer, source=source, index=index, embedder=embedder, cache=cache, lock=lock,
        clock=clock, history=history, graphs=graphs)
    service = providers.Singleton(
        MemoryService, engine=engine, indexer=indexer, source=source, chunks=chunks,
        index=index, graph=graph, graphs=graphs, embedder=embedder, feedback=feedback,
        history=history, clock=clock, before_search=before_search)


class Application(containers.DeclarativeContainer):
    config = providers.Configuration()
    gateways = providers.Container(Gateways, config=config)
    use_cases = providers.Container(
        UseCases, config=config, source=gateways.source, index=gateways.index,
        chunks=gateways.chunks, vectors=gateways.vectors, embedder=gateways.embedder,
        cache=gateways.cache, graph=gateways.graph, graphs=gateways.graphs,
        lock=gateways.lock, feedback=gateways.feedback, history=gateways.history,
        clock=gateways.clock)


def build(settings) -> Application:
    """An application container for one memory root."""
    app = Application()
    app.config.from_dict({"root": str(settings.root), "state_dir": str(settings.state_dir)})
    return app
