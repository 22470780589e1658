"""Generates a realistic, deterministic memory root (an Obsidian-like vault) for benchmarks.

    python benchmarks/generate_root.py /tmp/vault --notes 2000 --seed 0
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

REPOS = ["payments-api", "auth-service", "web-frontend", "data-pipeline", "mobile-app",
         "search-indexer", "billing-worker", "infra-terraform", "notifications", "ml-platform"]
PREFIX = {"payments-api": "PAY", "auth-service": "AUTH", "web-frontend": "WEB",
          "data-pipeline": "DATA", "mobile-app": "MOB", "search-indexer": "SRCH",
          "billing-worker": "BILL", "infra-terraform": "INFRA", "notifications": "NOTIF",
          "ml-platform": "ML"}
PROJECTS = ["checkout-revamp", "sso-migration", "cost-reduction", "gdpr-cleanup", "q3-reliability"]
TOPICS = ["retry backoff", "webhook signature", "token refresh", "rate limiting", "cache warmup",
          "schema migration", "feature flag", "batch export", "dead letter queue",
          "connection pool",
          "idempotency key", "session expiry", "pagination cursor", "blue green deploy",
          "circuit breaker", "log sampling", "index rebuild", "secret rotation", "timezone bug",
          "memory leak", "flaky test", "release checklist", "canary rollout", "oauth scopes"]
ASPECTS = ["design", "incident notes", "runbook", "gotchas", "decision", "investigation",
           "how it works", "postmortem", "open questions", "setup", "benchmarks", "review"]
CODE = ["PaymentClient.retry_charge", "TokenCache.refresh", "WebhookVerifier.verify",
        "RateLimiter.acquire", "SessionStore.expire", "ExportJob.run_batch", "db.pool.checkout",
        "IndexWriter.commit", "FeatureFlags.is_enabled", "CircuitBreaker.call", "make_signature",
        "parse_cursor", "load_settings", "SecretManager.rotate", "QueueConsumer.ack"]
ERRORS = ["ConnectionResetError: [Errno 104] Connection reset by peer",
          "psycopg2.OperationalError: server closed the connection unexpectedly",
          "TimeoutError: upstream request exceeded 30s", "KeyError: 'customer_id'",
          "HTTP 429 Too Many Requests", "redis.exceptions.ConnectionError: Error 111",
          "java.lang.OutOfMemoryError: Java heap space", "E11000 duplicate key error collection",
          "SSL: CERTIFICATE_VERIFY_FAILED", "ValueError: invalid signature header"]
TAGS = ["retry", "security", "performance", "incident", "migration", "testing", "deploy",
        "database", "api", "frontend", "observability", "cost", "oncall", "auth", "queue"]


@dataclass
class _Plan:
    path: str
    memory_id: str
    title: str
    repo: str | None = None
    project: str | None = None
    ticket: str | None = None
    kind: str = "memory"
    aliases: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _plan(rng: random.Random, notes: int) -> list[_Plan]:
    plans: list[_Plan] = []
    used: set[str] = set()

    def add(folder: str, title: str, **kw) -> _Plan:
        name, n = _slug(title), 2
        while f"{folder}/{name}.md".lower() in used:
            name, n = f"{_slug(title)}-{n}", n + 1
        path = f"{folder}/{name}.md"
        used.add(path.lower())
        plan = _Plan(path=path, memory_id=f"mem-{rng.getrandbits(40):010x}", title=title, **kw)
        plans.append(plan)
        return plan

    for repo in REPOS:
        add(f"Repos/{repo}", f"{repo} repository", repo=repo, kind="memory-anchor")
    for project in PROJECTS:
        add(f"Projects/{project}", f"{project} project", project=project, kind="memory-anchor")
    ticket_no = {repo: 100 for repo in REPOS}
    while len(plans) < notes:
        title = f"{rng.choice(TOPICS).capitalize()} {rng.choice(ASPECTS)}"
        roll = rng.random()
        if roll < 0.45:
            repo = rng.choice(REPOS)
            add(f"Repos/{repo}/Notes", title, repo=repo)
        elif roll < 0.65:
            repo = rng.choice(REPOS)
            ticket_no[repo] += rng.randint(1, 9)
            ticket = f"{PREFIX[repo]}-{ticket_no[repo]}"
            folder = f"Repos/{repo}/Tickets/{ticket}"
            plans.append(_Plan(path=f"{folder}/_ticket.md", title=f"{ticket} {title}",
                               memory_id=f"mem-{rng.getrandbits(40):010x}", repo=repo,
                               ticket=ticket))
            for _ in range(rng.randint(0, 3)):
                add(f"{folder}/Notes", f"{title} {rng.choice(ASPECTS)}", repo=repo, ticket=ticket)
        elif roll < 0.75:
            project = rng.choice(PROJECTS)
            add(f"Projects/{project}/Notes", title, project=project)
        else:
            folder = rng.choice(["Decisions", "Tools", "Workflows", "References"])
            add(folder, title)
    plans = plans[:notes]
    for plan in rng.sample(plans, k=len(plans) // 10):
        plan.aliases.append(f"{plan.title.split()[0]} {rng.choice(ASPECTS)} {rng.randint(1, 99)}")
    for newer in rng.sample(plans, k=len(plans) // 20):
        older = rng.choice(plans)
        if older is not newer and not older.superseded_by:
            newer.supersedes.append(older.memory_id)
            older.superseded_by.append(newer.memory_id)
    return plans


def _link(rng: random.Random, plan: _Plan) -> str:
    """A wikilink to a note, written the way people do: by stem, title, alias or id."""
    stem = plan.path.rsplit("/", 1)[-1][:-3]
    form = rng.random()
    if plan.aliases and form < 0.2:
        return f"[[{plan.aliases[0]}]]"
    if form < 0.5:
        return f"[[{stem}]]"
    if form < 0.8:
        return f"[[{plan.title}]]"
    return f"[[{stem}|{plan.title.lower()}]]"


def _render(rng: random.Random, plan: _Plan, plans: list[_Plan], local: list[_Plan]) -> str:
    related = rng.sample(local if len(local) > 3 and rng.random() < 0.7 else plans,
                         k=rng.randint(0, 3))
    related = [r for r in related if r is not plan]
    fm = ["---", f"memory_id: {plan.memory_id}", f"title: {plan.title}", f"type: {plan.kind}",
          f"status: {'superseded' if plan.superseded_by else 'active'}",
          f"created: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
          f"tags: [{', '.join(rng.sample(TAGS, k=rng.randint(1, 3)))}]"]
    if plan.ticket:
        fm += ["primary_scope:", "  kind: ticket", f"  id: {plan.ticket}"]
    if related:
        fm.append("related:")
        fm += [f'  - "{_link(rng, r)}"' for r in related]
    if rng.random() < 0.1:
        fm.append(f"related_repos: [{rng.choice(REPOS)}]")
    for name in ("aliases", "supersedes", "superseded_by"):
        if getattr(plan, name):
            fm.append(f"{name}: [{', '.join(getattr(plan, name))}]")
    fm.append("---")
    code, error = rng.choice(CODE), rng.choice(ERRORS)
    others = rng.sample(local if len(local) > 3 else plans, k=min(len(plans), rng.randint(1, 4)))
    mention = ""
    if plan.repo and rng.random() < 0.3:
        mention = f"{PREFIX[plan.repo]}-{rng.randint(100, 400)}"
    body = [f"# {plan.title}", "",
            f"Context for {plan.title.lower()}. See {_link(rng, others[0])} for background.", "",
            "## Details", "",
            f"The fix lives in `{code}`; it must stay idempotent when the caller retries.",
            f"Related reading: {', '.join(_link(rng, o) for o in others[1:]) or 'none'}.", ""]
    if rng.random() < 0.5:
        body += ["## Errors", "", "We saw this in production:", "", "```", error, "```", "",
                 f"Root cause: `{rng.choice(CODE)}` did not handle `{error.split(':')[0]}`.", ""]
    if mention:
        body += [f"Follow-up tracked in {mention}.", ""]
    if rng.random() < 0.3:
        target = rng.choice(plans)
        body += [f"Also see [the {target.title.lower()}](/{target.path}).", ""]
    return "\n".join(fm + body)


def generate_root(path: str | Path, notes: int = 2000, seed: int = 0) -> Path:
    """Write a vault of `notes` Markdown notes under path; the same seed gives the same files."""
    rng = random.Random(seed)
    root = Path(path)
    plans = _plan(rng, notes)
    by_scope: dict[str | None, list[_Plan]] = {}
    for plan in plans:
        by_scope.setdefault(plan.repo or plan.project, []).append(plan)
    for plan in plans:
        file = root / plan.path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(_render(rng, plan, plans, by_scope[plan.repo or plan.project]) + "\n",
                        encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate_root(args.path, notes=args.notes, seed=args.seed)


if __name__ == "__main__":
    main()
