"""Two host processes, one PostgreSQL database: a held call runs once.

Host A serves a turn: the model asks for a payment over the limit, the
call is held for a person, and the session (with the pending request) is
saved in PostgreSQL. The person approves; the approval reaches *both*
hosts (a retried webhook, two replicas behind a load balancer), and both
race to resume it. One runs it; the other is told it was claimed, and
runs nothing. The payment is in the ledger once.

Run it against any PostgreSQL database you may create tables in::

    pip install 'toolctx[postgres]'
    python examples/two_hosts.py postgresql://user:password@host/db

With ``--hosts N`` it starts N hosts instead of two.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import uuid

import attrs
import psycopg

from toolctx import Dispatcher, Registry, Session, ToolCall, execution_context
from toolctx.exceptions import ApprovalError
from toolctx.sessions import PostgresSessionStore, resume_stored


@attrs.frozen
class Host:
    """The runtime scope: the tenant, and where the ledger lives."""

    tenant_id: str
    dsn: str = attrs.field(repr=False)


registry = Registry()


@registry.tool(needs_approval=True)
def pay(to: str, amount: int) -> str:
    """Pay someone: a person approves every payment first."""
    ctx = execution_context()
    host = ctx.scope_as(Host)
    with psycopg.connect(host.dsn) as conn:
        conn.execute(
            "INSERT INTO example_ledger (invocation_id, payee, amount) "
            "VALUES (%s, %s, %s)",
            (ctx.invocation_id, to, amount),
        )
    return f"paid {amount} to {to}"


def hold(dsn: str, session_id: str) -> str:
    """Host A's turn: the call is held and the session stored.

    Returns:
        The held call's invocation id (what the review UI shows).
    """
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS example_ledger "
            "(invocation_id TEXT, payee TEXT, amount BIGINT)"
        )
    scope = Host("acme", dsn)
    session = Session(session_id, user_id="ada", scope=scope)
    held = Dispatcher(registry).dispatch(
        ToolCall("pay", {"to": "bob", "amount": 5000}), session
    )
    assert held.approval is not None
    with PostgresSessionStore(dsn) as store:
        store.save(scope, session)
    return held.approval.invocation_id


def resume(dsn: str, session_id: str, invocation_id: str) -> str:
    """One host resumes the approved call: "ran: ..." or "refused: ..."."""
    scope = Host("acme", dsn)
    with PostgresSessionStore(dsn) as store:
        try:
            result = resume_stored(
                Dispatcher(registry),
                store,
                scope,
                session_id,
                invocation_id,
                approved=True,
            )
        except ApprovalError as exc:
            return f"refused: {exc}"
    return f"ran: {result.output}"


def ledger_count(dsn: str, invocation_id: str) -> int:
    """How many times the payment *invocation_id* was made."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM example_ledger WHERE invocation_id = %s",
            (invocation_id,),
        ).fetchone()
    return 0 if row is None else int(row[0])


def main(argv: list[str] | None = None) -> int:
    """Hold a call, let the hosts race for it, check it ran once."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dsn", help="a PostgreSQL conninfo or URL")
    parser.add_argument("--hosts", type=int, default=2)
    args = parser.parse_args(argv)
    session_id = f"example-{uuid.uuid4().hex}"
    invocation_id = hold(args.dsn, session_id)
    print(f"held: pay 5000 to bob (invocation {invocation_id})")
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(args.hosts) as hosts:
        answers = hosts.starmap(
            resume, [(args.dsn, session_id, invocation_id)] * args.hosts
        )
    for number, answer in enumerate(answers, 1):
        print(f"host {number}: {answer[:70]}")
    count = ledger_count(args.dsn, invocation_id)
    print(f"payments made: {count}")
    ran = sum(answer.startswith("ran:") for answer in answers)
    return 0 if ran == 1 and count == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
