"""A question for a secret's value gets no answer and the warning that memory holds none; the
notes about where it is kept or how it rotates may follow, as leads and never as items.
Questions about a secret (where, how, who) are searched as usual. The gate is one step of the
search configuration: without it, the question is searched like any other."""

import pytest
from attrs import evolve
from builders import World, make_doc

from memory.application.search.config import SearchConfig
from memory.domain.query_gate import NO_SECRET_VALUES

# Phrasings beyond the domain test's lists: the rule is general, not a list of questions.
ASKS_FOR_VALUE = [
    "what is the production database password",
    "What's the prod Postgres password?",
    "production database password?",
    "tell me the password for the production database",
    "could you send me the prod db credentials",
    "I need the production database password to run the migration",
    "do you know the password of the production database",
    "remind me what the production database password is",
    "what did we set the production database password to?",
    "give me DB_PASSWORD for production",
    "can I get the prod database password please",
    "what is the payments API key",
    "paste the payments API key here",
    "hi! quick question: what's the payments webhook secret",
]
ASKS_ABOUT = [
    "where is the production database password stored",
    "how does the production database password rotate",
    "who rotates the production database password",
    "when does the payments API key expire",
    "how do we rotate credentials",
    "what is the password policy",
]


@pytest.fixture(scope="module")
def world():
    w = World([
        make_doc("Runbooks/Credentials.md",
                 "# Credential rotation\n\nThe production database password lives in Vault "
                 "at secret/prod/db.\nIt rotates every 90 days; the on-call engineer rotates "
                 "it with `vault rotate`.\nThe payments API key and the payments webhook "
                 "secret are kept in the same place and expire yearly.\n", memory_id="creds"),
        make_doc("Decisions/Passwords.md", "# Password policy\n\nPasswords must be at least "
                 "14 characters; credentials rotate every 90 days.\n", memory_id="policy"),
        make_doc("Repos/api/Notes/Retry.md", "# Retry\n\nThe API retries the webhook three "
                 "times.\n", memory_id="retry"),
    ])
    assert w.refresh("full").ok
    return w


@pytest.mark.parametrize("question", ASKS_FOR_VALUE)
def test_a_question_for_a_secret_value_has_no_answer_and_says_why(world, question):
    packet = world.service.search(question)
    assert packet.no_answer and packet.items == ()
    assert "asks for the value of a secret" in packet.no_answer_reason
    assert NO_SECRET_VALUES in packet.warnings
    assert all(lead.memory_id in {"creds", "policy"} for lead in packet.leads)


def test_the_note_on_where_it_is_kept_follows_as_a_lead(world):
    packet = world.service.search("what is the production database password")
    assert [lead.memory_id for lead in packet.leads][:1] == ["creds"]
    assert len(packet.leads) <= 3


@pytest.mark.parametrize("question", ASKS_ABOUT)
def test_a_question_about_a_secret_is_answered_as_usual(world, question):
    packet = world.service.search(question)
    assert "value of a secret" not in (packet.no_answer_reason or "")
    assert NO_SECRET_VALUES not in packet.warnings and packet.leads == ()
    assert packet.items and not packet.no_answer


def test_explain_tells_the_same_no_answer(world):
    explained = world.service.explain("what is the production database password", "creds")
    assert explained.no_answer and "value of a secret" in explained.no_answer_reason
    assert NO_SECRET_VALUES in explained.warnings
    assert "value of a secret" in explained.identity.why


def test_without_the_gate_the_question_is_searched_like_any_other(world):
    ungated = world.service.with_search_config(evolve(SearchConfig(), gate=None))
    packet = ungated.search("what is the production database password")
    assert not packet.no_answer and packet.items[0].memory_id == "creds"
    assert packet.leads == () and NO_SECRET_VALUES not in packet.warnings
