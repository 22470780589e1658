"""The composition root: which adapter plays which port, grouped by role."""

from __future__ import annotations

from dependency_injector import containers, providers

from memory.adapters.embeddings import SentenceTransformerEmbedder
from memory.adapters.git import GitSourceControl
from memory.adapters.git.note_history import GitNoteHistory
from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.graphify.graph_picture import GraphifyGraphPicture
from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.markdown.note_writer import MarkdownNoteWriter
from memory.adapters.sqlite import (SqliteEmbeddingCache, SqliteGenerations, SqliteIndex,
                                    SqliteLexicalIndex, SqliteNoteCatalogue, SqliteVectorIndex)
from memory.adapters.statefiles import (FileContentKeys, FileRefreshLock, JsonlFeedbackLog,
                                        JsonlRefreshHistory, JsonlWriteReceipts,
                                        JsonRefreshProgress, SystemClock)
from memory.adapters.watch import WatchfilesChangeFeed
from memory.application.browse.notes import NoteBrowser
from memory.application.capture.service import CaptureService
from memory.application.capture.index import (IndexCatalogue, IndexedWrites, IndexNoteEvidence,
                                              IndexSimilarNotes)
from memory.application.refresh.changes_only_history import ChangesOnlyHistory
from memory.application.refresh.freshness import FreshnessConfig, FreshnessPolicy
from memory.application.refresh.indexer import Indexer, RefreshPolicy
from memory.application.graph.picture import MemoryPicture
from memory.application.search.retrieval import RetrievalEngine
from memory.application.search.scope_names import CatalogueScopeNames
from memory.application.search.config import GatherConfig, SearchConfig
from memory.application.service import MemoryService
from memory.application.search.workspace_scope import WorkspaceScope
from memory.domain.errors import NotInstalled
from memory.domain.health import WriteAccess
from memory.domain.note_text import ContentKey
from memory.entrypoints.settings import REPOSITORY_ENV, Settings, default_model_cache
from memory.ports.content_keys import ContentKeys


# Near duplicates of a write are judged on the index's own signals in the write's scope:
# no graph, and the model may take a while to load (the write waits for it anyway).
DUPLICATE_SEARCH = SearchConfig(gather=GatherConfig(use_graph=False, semantic_wait_s=30.0),
                                hop=None)
WRITE_POLICY = RefreshPolicy(lock_timeout_s=10.0)  # then the write says it is not indexed yet


def _content_key(keys: ContentKeys) -> ContentKey:
    return keys.key()


def _note_history(root: str, enabled: bool) -> GitNoteHistory | None:
    """Commits of each write (serve --git-commit); InvalidRequest outside a git work tree."""
    return GitNoteHistory.for_root(root) if enabled else None


class Gateways(containers.DeclarativeContainer):
    """The real adapters: Markdown files, SQLite + sqlite-vec, MiniLM, Graphify, files."""

    config = providers.Configuration()
    # The key every content_hash is keyed with: the state folder's, or the shared store's.
    content_keys = providers.Singleton(FileContentKeys, state_dir=config.state_dir)
    content_key = providers.Singleton(_content_key, content_keys)
    source = providers.Singleton(MarkdownNoteSource, root=config.root, key=content_key,
                                 excluded=providers.List(config.state_dir))
    sqlite = providers.Singleton(SqliteIndex, state_dir=config.state_dir)
    index = providers.Singleton(SqliteGenerations, sqlite)
    lexical = providers.Singleton(SqliteLexicalIndex, sqlite)
    catalogue = providers.Singleton(SqliteNoteCatalogue, sqlite)
    vectors = providers.Singleton(SqliteVectorIndex, sqlite)
    embedder = providers.Singleton(SentenceTransformerEmbedder,
                                   cache_dir=config.model_cache,
                                   precision=config.embedding_precision)
    cache = providers.Singleton(SqliteEmbeddingCache, state_dir=config.state_dir)
    graph = providers.Singleton(GraphifyGraph, config.state_dir)
    graphs = providers.Singleton(GraphifyGenerations, root=config.root, state_dir=config.state_dir,
                                 memory_mb=config.graph_memory_mb,
                                 timeout_s=config.graph_timeout_s)
    graph_picture = providers.Singleton(GraphifyGraphPicture, config.state_dir)
    lock = providers.Singleton(FileRefreshLock, state_dir=config.state_dir)
    feedback = providers.Singleton(JsonlFeedbackLog, state_dir=config.state_dir)
    history = providers.Singleton(JsonlRefreshHistory, state_dir=config.state_dir)
    progress = providers.Singleton(JsonRefreshProgress, state_dir=config.state_dir)
    clock = providers.Singleton(SystemClock)
    change_feed = providers.Singleton(WatchfilesChangeFeed, root=config.root,
                                      state_dir=config.state_dir)
    source_control = providers.Singleton(GitSourceControl)
    writer = providers.Singleton(MarkdownNoteWriter, root=config.root, key=content_key,
                                 excluded=providers.List(config.state_dir))
    note_history = providers.Singleton(_note_history, root=config.root,
                                       enabled=config.git_commit)
    receipts = providers.Singleton(JsonlWriteReceipts, state_dir=config.state_dir)


class UseCases(containers.DeclarativeContainer):
    """The application, wired to whatever gateways it is given (ports as dependencies)."""

    config = providers.Configuration()
    source = providers.Dependency()
    index = providers.Dependency()
    lexical = providers.Dependency()
    catalogue = providers.Dependency()
    vectors = providers.Dependency()
    embedder = providers.Dependency()
    cache = providers.Dependency()
    graph = providers.Dependency()
    graphs = providers.Dependency()
    graph_picture = providers.Dependency()
    lock = providers.Dependency()
    feedback = providers.Dependency()
    history = providers.Dependency()
    progress = providers.Dependency()
    clock = providers.Dependency()
    change_feed = providers.Dependency()
    source_control = providers.Dependency()
    writer = providers.Dependency()
    note_history = providers.Dependency()
    receipts = providers.Dependency()
    search_config = providers.Object(SearchConfig())
    default_repository = providers.Object(None)
    before_search = providers.Object(None)
    freshness_config = providers.Object(FreshnessConfig())
    written = providers.Object(None)  # hears of each write's refresh (serving: the graph)

    scope_names = providers.Singleton(CatalogueScopeNames, catalogue=catalogue, index=index)
    engine = providers.Singleton(
        RetrievalEngine, lexical=lexical, catalogue=catalogue, vectors=vectors,
        embedder=embedder, graph=graph, config=search_config,
        default_repository=default_repository, scope_names=scope_names,
        today=providers.Callable(lambda clock: (lambda: clock.now_iso()[:10]), clock))
    indexer = providers.Singleton(
        Indexer, source=source, index=index, embedder=embedder, cache=cache, lock=lock,
        clock=clock, history=history, graphs=graphs, board=progress)
    # Refreshes the server makes on its own wait only briefly for another process's lock,
    # and are recorded only when they changed something.
    changes_history = providers.Singleton(ChangesOnlyHistory, history)
    quick_indexer = providers.Singleton(
        Indexer, source=source, index=index, embedder=embedder, cache=cache, lock=lock,
        clock=clock, history=changes_history, graphs=graphs,
        policy=providers.Object(RefreshPolicy(lock_timeout_s=3.0)), board=progress)
    write_indexer = providers.Singleton(
        Indexer, source=source, index=index, embedder=embedder, cache=cache, lock=lock,
        clock=clock, history=changes_history, graphs=graphs,
        policy=providers.Object(WRITE_POLICY))
    freshness = providers.Singleton(
        FreshnessPolicy, source=source, index=index, indexer=quick_indexer, embedder=embedder,
        clock=clock, feed=change_feed, config=freshness_config, board=progress)
    workspace = providers.Singleton(
        WorkspaceScope, source_control=source_control, catalogue=catalogue, index=index,
        cwd=config.cwd, explicit=config.repository, explicit_source=f"env:{REPOSITORY_ENV}",
        enabled=config.auto_scope)
    browser = providers.Singleton(NoteBrowser, catalogue=catalogue, source=source, index=index,
                                  before_read=before_search)
    picture = providers.Singleton(MemoryPicture, graph=graph_picture, catalogue=catalogue,
                                  scope_names=scope_names,
                                  graph_lag=providers.Callable(lambda i: i.graph_lag, indexer))
    capture = providers.Singleton(
        CaptureService, writer=writer, catalogue=providers.Singleton(IndexCatalogue, catalogue),
        similar=providers.Singleton(
            IndexSimilarNotes, engine=providers.Singleton(
                RetrievalEngine, lexical=lexical, catalogue=catalogue, vectors=vectors,
                embedder=embedder, graph=None, config=providers.Object(DUPLICATE_SEARCH)),
            chunks=catalogue, index=index),
        indexer=providers.Singleton(IndexedWrites, write_indexer, published=written),
        evidence=providers.Singleton(IndexNoteEvidence, catalogue, index), clock=clock,
        history=note_history, receipts=receipts)
    service = providers.Singleton(
        MemoryService, engine=engine, indexer=indexer, source=source, lexical=lexical,
        catalogue=catalogue, index=index, graph=graph, graphs=graphs, embedder=embedder,
        feedback=feedback, history=history, clock=clock, before_search=before_search,
        board=progress, writes=providers.Factory(WriteAccess.served, read_only=config.read_only,
                                                 git_commit=config.git_commit),
        shared_index=config.reads_shared_index)


class Application(containers.DeclarativeContainer):
    config = providers.Configuration()
    gateways = providers.Container(Gateways, config=config)
    use_cases = providers.Container(
        UseCases, config=config, source=gateways.source, index=gateways.index,
        lexical=gateways.lexical, catalogue=gateways.catalogue, vectors=gateways.vectors,
        embedder=gateways.embedder, cache=gateways.cache, graph=gateways.graph,
        graphs=gateways.graphs, graph_picture=gateways.graph_picture,
        lock=gateways.lock, feedback=gateways.feedback, history=gateways.history,
        progress=gateways.progress, clock=gateways.clock, change_feed=gateways.change_feed,
        source_control=gateways.source_control, writer=gateways.writer,
        note_history=gateways.note_history, receipts=gateways.receipts)


# A command line read: the same catch-up step as a server's, waiting as long as it waits for
# the model (it has nothing better to do), and leaving no thread behind.
ONE_SHOT_FRESHNESS = FreshnessConfig(search_budget_s=120.0, background=False)


def build(settings: Settings, *, serving: bool = False, one_shot: bool = False) -> Application:
    """An application container for one memory root.

    `serving` (the MCP server) adds the freshness policy before each read (watching the
    root unless settings.watch is off) and the workspace's repository as default scope;
    `one_shot` (a CLI read) the same policy without a watcher or a background thread.
    """
    app = Application()
    cwd = settings.cwd
    app.config.from_dict({
        "root": str(settings.root), "state_dir": str(settings.state_dir),
        "cwd": str(cwd) if cwd else None, "repository": settings.repository,
        "auto_scope": settings.auto_scope,
        "embedding_precision": settings.embedding_precision,
        "model_cache": str(settings.model_cache or default_model_cache()),
        "graph_memory_mb": settings.graph_memory_mb,
        "graph_timeout_s": settings.graph_timeout_s,
        "git_commit": settings.git_commit,
        "read_only": settings.read_only,
        "reads_shared_index": settings.reads_shared_index})
    if settings.store:
        _use_postgres(app.gateways, settings.store)
    if serving:
        # A read-only server of a shared store reads what the indexer publishes: it never
        # indexes its own root, which on another host holds no notes (an index of it would
        # be empty).
        reader = settings.reads_shared_index
        if not settings.watch or reader:
            app.gateways.change_feed.override(providers.Object(None))
        if not reader:
            app.use_cases.before_search.override(app.use_cases.freshness.provided.before_search)
        app.use_cases.default_repository.override(app.use_cases.workspace)
        app.use_cases.written.override(app.use_cases.freshness.provided.published)
    elif one_shot and not settings.reads_shared_index:
        app.gateways.change_feed.override(providers.Object(None))
        app.use_cases.freshness_config.override(providers.Object(ONE_SHOT_FRESHNESS))
        app.use_cases.before_search.override(app.use_cases.freshness.provided.before_search)
    return app


def _use_postgres(gateways: Gateways, url: str) -> None:
    """The index's whole adapter set on one Postgres database (imported only when asked
    for, so a SQLite install never loads psycopg)."""
    try:
        from memory.adapters.postgres import (PostgresContentKeys, PostgresDatabase,
                                              PostgresEmbeddingCache, PostgresGenerations,
                                              PostgresLexicalIndex, PostgresNoteCatalogue,
                                              PostgresRefreshLock, PostgresVectorIndex)
    except ImportError as exc:  # psycopg missing, or its libpq (psycopg[binary] ships one)
        from memory.entrypoints.clients.launcher import DISTRIBUTION
        raise NotInstalled(f"--store postgresql://... needs the Postgres extra, which could not "
                           f"be imported ({exc}): pip install '{DISTRIBUTION}[postgres]'"
                           ) from exc
    database = providers.Singleton(PostgresDatabase, url)
    for name, adapter in (("index", PostgresGenerations), ("lexical", PostgresLexicalIndex),
                          ("catalogue", PostgresNoteCatalogue),
                          ("vectors", PostgresVectorIndex), ("cache", PostgresEmbeddingCache),
                          ("lock", PostgresRefreshLock), ("content_keys", PostgresContentKeys)):
        getattr(gateways, name).override(providers.Singleton(adapter, database))
    _graph_in_postgres(gateways, database)


def _graph_in_postgres(gateways: Gateways, database: providers.Provider) -> None:
    """Graphify still builds on the host that refreshes (in its state folder); the published
    graph is a row of the database, which every server reads."""
    from memory.adapters.graphify.stored import StoredGraphGenerations
    from memory.adapters.postgres import PostgresGraphStore
    store = providers.Singleton(PostgresGraphStore, database)
    config = gateways.config
    builder = providers.Singleton(GraphifyGenerations, root=config.root,
                                  state_dir=config.state_dir, memory_mb=config.graph_memory_mb,
                                  timeout_s=config.graph_timeout_s)
    gateways.graphs.override(providers.Singleton(StoredGraphGenerations, builder, store))
    gateways.graph.override(providers.Singleton(GraphifyGraph, store))
    gateways.graph_picture.override(providers.Singleton(GraphifyGraphPicture, store))
