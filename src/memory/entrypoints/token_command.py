"""`ai-memory token create|list|revoke`: API tokens for `serve --http --auth tokens`."""

from __future__ import annotations

import json
import secrets
import sys
from datetime import datetime, timezone

from memory.adapters.statefiles import JsonTokenStore
from memory.domain.errors import NotFound
from memory.domain.tokens import ApiToken, TokenScope, bearer_value, token_name
from memory.entrypoints.settings import Settings


def run_token(args, settings: Settings) -> int:
    store = JsonTokenStore(settings.state_dir)
    if args.token_command == "create":
        return _create(store, args.name, TokenScope.parse(args.scope))
    if args.token_command == "list":
        return _list(store, args.json)
    return _revoke(store, token_name(args.name))


def _create(store: JsonTokenStore, name: str, scope: TokenScope) -> int:
    token_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    store.add(ApiToken.issue(name=name, scope=scope, token_id=token_id, secret=secret,
                             salt=secrets.token_bytes(16), created=created))
    print(bearer_value(token_id, secret))
    print(f"token {name!r} ({scope.value}) created; it is shown only this once: hand it to "
          f"the client as `Authorization: Bearer <token>`. Only a salted hash is kept, in "
          f"{store.path}.", file=sys.stderr)
    return 0


def _list(store: JsonTokenStore, as_json: bool) -> int:
    tokens = store.all()
    if as_json:
        print(json.dumps([{"name": t.name, "scope": t.scope.value, "id": t.token_id,
                           "created": t.created} for t in tokens], indent=2))
    elif not tokens:
        print("no tokens; create one with `ai-memory token create --name NAME --scope read`")
    for token in () if as_json else tokens:
        print(f"{token.name}\t{token.scope.value}\t{token.created}\tid {token.token_id}")
    return 0


def _revoke(store: JsonTokenStore, name: str) -> int:
    if not store.remove(name):
        raise NotFound(f"no token named {name!r} (see `ai-memory token list`)")
    print(f"token {name!r} revoked; a running server refuses it from the next request on",
          file=sys.stderr)
    return 0
