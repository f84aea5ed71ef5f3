"""``irsample assess``: judge a design's documents in a browser (the optional extra
``irsample[assess]``; see docs/assess.md).

- ``assess serve --design DIR --docs PATH --topics PATH --db FILE``: the web app on
  http://127.0.0.1:8765 (``--host``/``--port``; port 0 picks a free one). It prints
  ``serving on URL`` once it listens.
- ``assess add-assessor --db FILE NAME``: registers an assessor and prints the personal link.
- ``assess export --db FILE -o FILE``: the judgments as TREC qrels ``topic assessor docno
  grade`` (the assessor in the iteration column, which qrels readers ignore), one line per
  document, which ``irsample merge`` reads; a document judged by several assessors gets the
  grade chosen by ``--resolve`` (default: the first judgment made). ``--details FILE``
  writes every judgment with its assessor, note and time (TSV).
"""

from __future__ import annotations

import sys

from ..errors import InputError
from .arguments import number

DEFAULT_PORT = 8765
RESOLVE = ("first", "max", "min")


def add_parser(sub) -> None:
    from ..assess import ORDERS

    p = sub.add_parser("assess", help="judge a design's documents in a browser (web app)",
                       description="A judging web app for the documents a design selected; "
                       "judgments are kept in SQLite and exported for irsample merge.")
    cmds = p.add_subparsers(dest="assess_command", required=True)

    s = cmds.add_parser("serve", help="run the web app",
                        description="Serve the judging app until interrupted.")
    s.add_argument("--design", required=True, metavar="DIR",
                   help="folder written by irsample sample (or its design.json)")
    s.add_argument("--docs", required=True, metavar="PATH",
                   help="documents: TREC SGML (.gz too), JSONL {docno, text}, or a folder")
    s.add_argument("--topics", required=True, metavar="PATH",
                   help="topics: TREC topic file (title, desc, narr) or qid<TAB>title TSV")
    s.add_argument("--db", required=True, metavar="FILE", help="SQLite file of the judgments")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=number(int, minimum=0), default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    s.add_argument("--order", choices=ORDERS, default="design",
                   help="design: stratum by stratum, shuffled within (default); topic: the "
                   "same topic by topic; mtf, mtf-global, hedge: an adaptive method over the "
                   "design's documents (needs --runs)")
    s.add_argument("--runs", nargs="+", metavar="RUN", help="the design's run files "
                   "(adaptive orders)")
    s.add_argument("--beta", type=float, default=None, help="Hedge's beta (default 0.1)")
    s.add_argument("--overlap", type=number(float, minimum=0.0), default=0.0, metavar="SHARE",
                   help="share of documents judged by two assessors (default 0)")
    s.add_argument("--seed", type=int, default=None,
                   help="seed of the shuffle and the overlap (default: the design's seed)")
    s.add_argument("--grades", default="0-3",
                   help="grades offered, one key each: a range (0-3, default) or a list (0,1)")
    s.add_argument("-l", "--level", type=number(int, minimum=1), default=1,
                   help="lowest relevant grade (adaptive orders, binary agreement)")
    s.add_argument("--lease", type=number(float, above=0), default=600.0, metavar="SECONDS",
                   help="how long a document handed out is kept from other assessors")
    s.set_defaults(run=cmd_serve)

    a = cmds.add_parser("add-assessor", help="register an assessor; prints the personal link")
    a.add_argument("--db", required=True, metavar="FILE")
    a.add_argument("name", help="assessor name (letters, digits, _ . -)")
    a.add_argument("--url", default=f"http://127.0.0.1:{DEFAULT_PORT}",
                   help="the app's address, for the link (default %(default)s)")
    a.set_defaults(run=cmd_add_assessor)

    e = cmds.add_parser("export", help="write the judgments as qrels for irsample merge")
    e.add_argument("--db", required=True, metavar="FILE")
    e.add_argument("-o", "--output", required=True, metavar="FILE", help="qrels file to write")
    e.add_argument("--resolve", choices=RESOLVE, default="first",
                   help="grade of a document judged by several assessors (default first)")
    e.add_argument("--details", metavar="FILE",
                   help="also write every judgment (topic docno stratum assessor grade time "
                   "note) as TSV")
    e.set_defaults(run=cmd_export)


def _need_extra():
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise InputError(f"the assessment app needs the extra irsample[assess] "
                         f"(pip install 'irsample[assess]'): {exc}") from None


def _store(path, *, must_exist: bool):
    from pathlib import Path

    from ..assess.store import Store

    if must_exist and not Path(path).is_file():
        raise InputError("no such judging database", str(path))
    return Store(path)


def cmd_serve(args) -> str:
    _need_extra()
    import ipaddress
    import socket

    import uvicorn

    from ..assess.app import create_app
    from ..assess.session import Session, parse_grades

    if args.overlap > 1:
        raise InputError(f"--overlap is a share in [0, 1], not {args.overlap}")
    session = Session.open(args.design, args.docs, args.topics, args.db, order=args.order,
                           overlap=args.overlap, seed=args.seed, grades=parse_grades(args.grades),
                           runs=args.runs, beta=args.beta, rel_level=args.level,
                           lease_seconds=args.lease)
    try:
        info = socket.getaddrinfo(args.host, args.port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(info[0], socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by connections
        sock.bind(info[4])
    except OSError as exc:
        raise InputError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    host, port = sock.getsockname()[:2]
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        print(f"irsample: warning: listening on {host}, reachable from other machines; links "
              "carry tokens over plain HTTP", file=sys.stderr)
    items = session.store.items()
    shown = f"[{host}]" if ":" in host else host
    print(f"serving on http://{shown}:{port}/ ({len(items)} documents to judge, order "
          f"{args.order}, db {args.db})", flush=True)
    config = uvicorn.Config(create_app(session), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    session.store.close()
    return ""


def cmd_add_assessor(args) -> str:
    store = _store(args.db, must_exist=False)
    token = store.add_assessor(args.name)
    store.close()
    return f"{args.name}\t{args.url.rstrip('/')}/login?token={token}\n"


def cmd_export(args) -> str:
    import datetime

    from ..io.output import write_atomic

    store = _store(args.db, must_exist=True)
    rows = store.judgments()
    store.close()
    if not rows:
        raise InputError("no judgments to export", str(args.db))
    by_doc: dict[tuple[str, str], list] = {}
    for r in rows:
        by_doc.setdefault((r[0], r[1]), []).append(r)
    pick = {"first": lambda rs: rs[0], "max": lambda rs: max(rs, key=lambda r: (r[4], -r[6])),
            "min": lambda rs: min(rs, key=lambda r: (r[4], r[6]))}[args.resolve]
    lines, disagree = [], 0
    for (topic, docno), rs in sorted(by_doc.items()):
        chosen = pick(rs)
        disagree += len({r[4] for r in rs}) > 1
        lines.append(f"{topic} {chosen[3]} {docno} {chosen[4]}\n")
    if args.details:
        out = ["topic\tdocno\tstratum\tassessor\tgrade\ttime\tnote\n"]
        for r in rows:
            when = datetime.datetime.fromtimestamp(r[6], datetime.UTC).isoformat()
            note = " ".join(r[5].split())
            out.append(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]}\t{when}\t{note}\n")
        write_atomic(args.details, "".join(out).encode("utf-8", "surrogateescape"))
    several = sum(len(rs) > 1 for rs in by_doc.values())
    print(f"{len(rows)} judgments of {len(by_doc)} documents; {several} judged by several "
          f"assessors ({disagree} with different grades, resolved by {args.resolve})",
          file=sys.stderr)
    return "".join(lines)
