"""The near-duplicate thresholds of memory_write, measured on the frozen fixture vault.

    python benchmarks/duplicate_thresholds.py [--json results.json]

Indexes a copy of benchmarks/fixtures/vault with the real stack, then asks the index's
signals (IndexSimilarNotes.likeness: the best cosine of the write's title and start of body
with a chunk of the note, and the share of its content terms the note holds) about three
kinds of write, each in the scope of the note it is built from:

- restatements: a note of the vault said again in other words under another title
  (RESTATED, written by hand); the signals of the restated note are measured, and whether
  any other note would be named too;
- leave-one-out: every current note of the vault written again into its own scope with
  itself left out: a real, different note of that scope (no other note may be named);
- new subjects: plausible notes the vault does not hold, in a scope it has (NEW).

It prints, for a grid of (cosine, coverage) thresholds, how many restatements are caught
and how many other notes would wrongly be named; docs/benchmarks.md keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from memory.application.capture.index import DuplicatePolicy, IndexSimilarNotes
from memory.application.search.retrieval import RetrievalEngine
from memory.domain.placement import ScopeKey, WriteScope
from memory.entrypoints.container import DUPLICATE_SEARCH, build
from memory.entrypoints.settings import Settings

VAULT = Path(__file__).parent / "fixtures" / "vault"

# (path of the restated note, scope of the write, title, body)
RESTATED = [
    ("Repos/alpha/Notes/retry-policy.md", {"repository": "alpha"},
     "How alpha retries storage uploads",
     "The alpha uploader wraps storage calls in retry_with_jitter (src/alpha/uploader/retry.py): "
     "up to 6 attempts, an exponential delay from 0.5 s capped at 30 s, with full jitter. Only "
     "idempotent requests (chunk PUTs with Content-MD5) are retried; POST /artifacts never is. "
     "ALPHA_MAX_RETRIES in the Helm values overrides the attempt count, and 429 or 503 "
     "responses wait for Retry-After."),
    ("Repos/alpha/Notes/feature-flags.md", {"repository": "alpha"},
     "Feature flag list for alpha",
     "alpha reads its flags from the ALPHA_FLAGS environment variable, parsed in "
     "src/alpha/flags.py. enable_parallel_upload (on in staging, off in prod) uploads up to 4 "
     "chunks at once; strict_checksums (on by default) rejects chunks with a bad Content-MD5; "
     "legacy_zip_listing (off) keeps the old zip listing endpoint. Enabling a flag in "
     "production needs an ack from Priya Raman in #team-artifacts."),
    ("Repos/alpha/Notes/local-dev.md", {"repository": "alpha"},
     "Running alpha on a laptop",
     "Run make dev to bring up Postgres, Redis and MinIO via docker compose; the API listens on "
     "8081. make test runs pytest against that stack, make test-unit needs no services. If "
     "tests fail with sqlite3.OperationalError: database is locked, two xdist workers share "
     ".cache/alpha.db: use -p no:xdist or a separate ALPHA_CACHE_PATH per worker."),
    ("Repos/beta/Notes/flaky-e2e.md", {"repository": "beta"},
     "Dealing with flaky Playwright specs in beta",
     "On top of the team's flaky test policy: beta's Playwright specs mostly flake when they "
     "poll the alpha API, so replace fixed sleeps with expect.poll(). CI retries each e2e spec "
     "twice already; a spec that needs a third attempt is broken."),
    ("Repos/beta/Notes/report-storage.md", {"repository": "beta"},
     "Where beta stores generated reports",
     "Reports are written to the bucket named in BETA_REPORT_BUCKET, one per environment "
     "(beta-reports-staging, beta-reports-prod). Keys look like reports/yyyy/mm/<report-id>.pdf "
     "and a lifecycle rule deletes them after 180 days. Files above 100 MiB go up as multipart "
     "uploads. Users get pre-signed download URLs that expire after 15 minutes."),
    ("Decisions/ADR-011-artifact-retention-by-build-type.md", {"kind": "decision"},
     "How long build artifacts are kept",
     "Decision: artifacts of release builds (tags v*) stay 400 days, builds of main 90 days and "
     "pull-request builds 14 days. A nightly sweep at 03:00 UTC "
     "(src/alpha/workers/retention.py) deletes the rest and records each deletion in the "
     "retention-audit table. Support needs a year of release artifacts for escalations."),
    ("Decisions/ADR-012-redis-leases.md", {"kind": "decision"},
     "Job locking with Redis leases",
     "Decision: a worker holds a Redis lease per job, LeaseManager.acquire(job_id, ttl=60) with "
     "SET NX PX, renewed every 20 seconds; if a renewal fails the worker drops the job. Keys are "
     "alpha:lease:<job_id>. Advisory locks stopped working once PgBouncer ran in transaction "
     "mode, so jobs ran twice."),
    ("Tools/nx-cli.md", {"kind": "tool"}, "Using the nx command",
     "nx is the CLI of the Nexus (NX) gateway that hands out short-lived tokens for alpha and "
     "beta. Log in with nx auth device (SSO device flow); the token is valid 8 hours, refreshes "
     "while nx runs and is cached in ~/.config/nx/token.json with mode 0600. nx secrets rotate "
     "<name> rotates a Kubernetes secret in the current namespace."),
    ("Workflows/release-process.md", {"kind": "workflow"}, "How we ship a release",
     "For alpha and beta: on Tuesday cut release/x.y from main, soak it on staging for a day "
     "while watching the Grafana dashboards, tag vX.Y.Z so that CI builds and signs the images, "
     "generate the notes with the changelog tool into the GitHub release, deploy to prod after "
     "10:00 but never on a Friday, then post in #releases."),
    ("Workflows/database-migrations.md", {"kind": "workflow"}, "Rules for schema migrations",
     "alpha uses Alembic and beta uses Prisma against the shared Postgres clusters. Migrations "
     "must stay backward compatible with the previous release (expand, then contract). Run prod "
     "migrations only after 19:00 CET, never in business hours. Put CREATE INDEX CONCURRENTLY "
     "in a migration of its own. Announce in both team channels: staging is shared."),
    ("Workflows/code-review.md", {"kind": "workflow"}, "Our pull request review rules",
     "Every merge request needs two approvals, one from a codeowner. Aim for PRs below about 400 "
     "changed lines and keep refactors apart from behaviour changes. Reviewers answer within a "
     "working day, else ping the team channel. Titles follow conventional commits (fix:, "
     "feat:) so that the changelog generator can group them."),
    ("Projects/apollo/Notes/cutover-plan.md", {"project": "apollo"},
     "Apollo migration weekend runbook",
     "The cutover happens on Saturday 13 June 2026 between 06:00 and 10:00 UTC. At 06:00 alpha "
     "goes read-only with ALPHA_READ_ONLY=1 and agents buffer their uploads. From the migration "
     "host, rclone sync copies minio:artifacts to s3:apollo-artifacts-prod-euc1 with --checksum "
     "(the dry run took 2 h 40 for 38 TB). Beta moves BETA_REPORT_BUCKET to "
     "apollo-reports-prod-euc1 in the same window. Rollback: point storage back at MinIO, kept "
     "writable until 27 June."),
    ("References/error-codes.md", {"kind": "reference"},
     "What the NX, alpha and beta error codes mean",
     "NX-401 means the token expired: run nx auth device again, and check NTP when an agent's "
     "clock drifts over 5 minutes. NX-403 is a missing scope like artifacts:write. NX-429 is the "
     "rate limit of 50 requests per second per token. ALPHA-E013 is a chunk checksum mismatch "
     "(retried), ALPHA-E021 a build id that was never registered. BETA-E007: the pre-signed "
     "link is older than 15 minutes."),
    ("People/priya-raman.md", {"kind": "person"}, "Priya, alpha's tech lead",
     "Priya Raman leads alpha from London. She reviews every alpha schema change and approves "
     "flags turned on in production. Marco Silva covers her reviews and flag approvals during "
     "her parental leave, June to September 2026."),
    ("Repos/alpha/Tickets/ALPHA-142/Notes/fix-plan.md", {"repository": "alpha",
                                                          "ticket": "ALPHA-142"},
     "Plan to fix the ALPHA-142 upload resets",
     "Move the uploader to chunked uploads with ArtifactUploader.upload_chunked (alpha 3.8.0), "
     "retry each chunk PUT with retry_with_jitter, raise the ingress proxy-read-timeout to 300 "
     "seconds and add a Grafana panel of upload resets per agent. To roll back, "
     "UPLOAD_CHUNK_SIZE_MB=0 on the agents brings single-PUT uploads back."),
]

# Short notes repeating one fact of a note: an update of that note, not new knowledge.
RESTATED += [
    ("Repos/alpha/Notes/feature-flags.md", {"repository": "alpha"},
     "Parallel upload flag",
     "enable_parallel_upload is off in prod and on in staging; it sends up to 4 chunks of an "
     "artifact at once."),
    ("Repos/alpha/Notes/ingress-limits.md", {"repository": "alpha"},
     "Ingress body size limit",
     "nginx in front of alpha answers 413 Request Entity Too Large for big bodies; the "
     "proxy-body-size annotation set to 0 lifts the limit, and proxy-read-timeout is 300 s."),
    ("Repos/beta/Notes/report-storage.md", {"repository": "beta"},
     "Report download links",
     "Download links of beta reports are pre-signed URLs valid for 15 minutes; reports expire "
     "after 180 days."),
]

# (scope, title, body): knowledge the vault does not hold, in scopes it has
NEW = [
    ({"repository": "alpha"}, "Alpha log levels",
     "alpha logs at INFO in prod. To debug upload stalls set ALPHA_LOG_LEVEL=debug on one pod "
     "with kubectl set env; logs ship to Loki with the label app=alpha-api and are kept 14 days."),
    ({"repository": "alpha"}, "Alpha metrics endpoint",
     "The API serves Prometheus metrics on port 9102 at /metrics. upload_bytes_total and "
     "upload_chunk_seconds are the counters the on-call dashboard reads; scrape interval 30 s."),
    ({"repository": "beta"}, "Beta PDF rendering",
     "Reports are rendered to PDF by WeasyPrint in the beta-render worker queue. Fonts come from "
     "the beta-fonts image layer; a render that runs over 60 seconds is killed and retried once."),
    ({"repository": "beta"}, "Beta authentication",
     "beta's web app signs users in with the company SSO (OIDC); sessions last 12 hours and the "
     "refresh token is stored in an httpOnly cookie named beta_session."),
    ({"kind": "decision"}, "ADR-013 OpenTelemetry for tracing",
     "Decision: alpha and beta emit traces with the OpenTelemetry SDK to the collector at "
     "otel-collector:4317; Jaeger is retired. Sampling is 10 percent in prod, all in staging."),
    ({"kind": "tool"}, "k9s for browsing the clusters",
     "k9s is the terminal UI we use to look at pods and logs; :ctx switches cluster, :ns the "
     "namespace, and l shows a pod's logs. Read-only kubeconfigs are enough for it."),
    ({"kind": "workflow"}, "Incident postmortems",
     "Every SEV1 or SEV2 incident gets a blameless postmortem within five working days, written "
     "in the incidents space, reviewed at the Thursday ops meeting, with owners for each action."),
    ({"project": "apollo"}, "Apollo storage cost estimate",
     "Keeping 38 TB in S3 Standard in eu-central-1 costs about 870 USD a month; moving build "
     "artifacts older than 90 days to Glacier Instant Retrieval would save roughly 40 percent."),
    ({"kind": "person"}, "Ana Costa",
     "Ana Costa is an SRE in Lisbon. She owns the ingress controllers and the on-call rota "
     "tooling, and is the person to ask about certificate renewals."),
    ({"repository": "alpha", "ticket": "ALPHA-142"}, "ALPHA-142 customer communication",
     "Support told the three affected customers on 2026-05-20 that uploads over 2 GB may reset; "
     "a status page entry links the workaround of uploading from a CI runner in the same region."),
]


def prepare(workdir: Path):
    root = workdir / "vault"
    shutil.copytree(VAULT, root)
    app = build(Settings.resolve(str(root)))
    report = app.use_cases.service().refresh("index")
    assert report.ok, report
    g = app.gateways
    engine = RetrievalEngine(g.lexical(), g.catalogue(), g.vectors(), g.embedder(), None,
                             DUPLICATE_SEARCH)
    return app, IndexSimilarNotes(engine, g.catalogue(), g.index())


def signals(similar: IndexSimilarNotes, title: str, body: str, scope: ScopeKey):
    return [{"path": x.note.path, "cosine": x.cosine, "coverage": round(x.coverage, 3)}
            for x in similar.likeness(title=title, body=body, scope=scope)]


def measure(app, similar: IndexSimilarNotes) -> dict:
    chunks = app.gateways.catalogue()
    restated = []
    for path, scope, title, body in RESTATED:
        found = signals(similar, title, body, WriteScope.parse(**scope).key)
        restated.append({"target": path, "title": title, "found": found})
    left_out = []
    for note in chunks.notes():
        if note.scope_kind is None or not note.effective_status.is_current:
            continue
        lines = chunks.lines(note.memory_id)
        body = "\n".join(lines[chunks.chunks_of(note.memory_id)[0].start_line - 1:])
        found = [s for s in signals(similar, note.title, body, ScopeKey.of_note(note))
                 if s["path"] != note.path]
        left_out.append({"source": note.path, "found": found})
    new = [{"title": title, "found": signals(similar, title, body,
                                             WriteScope.parse(**scope).key)}
           for scope, title, body in NEW]
    return {"restated": restated, "left_out": left_out, "new": new}


def passes(s: dict, cosine: float, coverage: float) -> bool:
    return s["cosine"] is not None and s["cosine"] >= cosine and s["coverage"] >= coverage


def sweep(results: dict) -> list[tuple]:
    rows = []
    for cosine in (0.0, 0.55, 0.60, 0.70, 0.80):
        for coverage in (0.0, 0.5, 0.6, 0.68, 0.7, 0.8):
            caught = sum(any(s["path"] == r["target"] and passes(s, cosine, coverage)
                             for s in r["found"]) for r in results["restated"])
            wrong_r = sum(any(s["path"] != r["target"] and passes(s, cosine, coverage)
                              for s in r["found"]) for r in results["restated"])
            wrong_l = sum(any(passes(s, cosine, coverage) for s in r["found"])
                          for r in results["left_out"])
            wrong_n = sum(any(passes(s, cosine, coverage) for s in r["found"])
                          for r in results["new"])
            rows.append((cosine, coverage, caught, wrong_r, wrong_l, wrong_n))
    return rows


def report(results: dict) -> None:
    print("restatements: the restated note's signals (cosine, coverage)")
    for r in results["restated"]:
        mine = next((s for s in r["found"] if s["path"] == r["target"]), None)
        other = max((s["cosine"] or 0 for s in r["found"] if s["path"] != r["target"]),
                    default=0)
        print(f"  {r['target']}: {mine and (mine['cosine'], mine['coverage'])}; "
              f"best other cosine {other:.3f}")
    for name in ("left_out", "new"):
        worst = sorted(((s["cosine"] or 0, s["coverage"]) for r in results[name]
                        for s in r["found"]), reverse=True)[:5]
        print(f"{name}: {len(results[name])} writes; highest (cosine, coverage): {worst}")
    n_r, n_l, n_n = (len(results[k]) for k in ("restated", "left_out", "new"))
    print(f"\n| cosine >= | coverage >= | restatements caught (of {n_r}) | other notes named: "
          f"restatements | leave-one-out (of {n_l}) | new subjects (of {n_n}) |")
    print("|---|---|---|---|---|---|")
    for row in sweep(results):
        print("| %.2f | %.2f | %d | %d | %d | %d |" % row)
    policy = DuplicatePolicy()
    print(f"\npolicy in use: cosine >= {policy.min_cosine}, coverage >= {policy.min_coverage}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="also write the raw signals here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        app, similar = prepare(Path(tmp))
        results = measure(app, similar)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
