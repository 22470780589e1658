"""Which questions ask for several things (a list, a count, a combination)."""

import pytest

from question_shapes import asks_for_many


@pytest.mark.parametrize("question", [
    "How many incidents did the payments service have?",
    "How often do we rotate the signing keys?",
    "What is the number of retries before a job is parked?",
    "List the services that read from the orders queue",
    "Name all the flags the installer accepts",
    "What are all the steps of a rollback?",
    "Have we ever restored the database from a snapshot?",
    "Which teams own both the gateway and the scheduler?",
    "What activities did the team plan for the offsite?",
    "Which cities has the sales team visited?",
    "What kinds of alerts page the on-call engineer?",
    "What outdoor sports does she enjoy?",
    "Which open-source libraries/frameworks did we evaluate?",
    "What are the prerequisites for a release?",
    "Who were the reviewers of the storage decision?",
    "What children's books did he recommend?",
    "Based on the runbooks, which dashboards should be checked first?",
])
def test_questions_asking_for_several_things(question):
    assert asks_for_many(question)


@pytest.mark.parametrize("question", [
    "What is the retry budget of the payment webhook?",
    "When did we move the cache to Redis?",
    "What does the deploy script do first?",
    "Which database does the puppetmaster use?",
    "What kind of model does the embedder run?",
    "Who is the project lead?",
    "Where is the status page hosted?",
    "Why was the CDN replaced?",
    "What was the root cause of the outage?",
    "What did she paint last week?",
    "Which city he reads about is never said",  # a relative clause's verb, not a plural
    "What news did the release bring?",  # a plural-looking singular
    "What process handles the address book sync?",
    "",
])
def test_questions_asking_for_one_thing(question):
    assert not asks_for_many(question)
