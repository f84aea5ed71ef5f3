"""``irsample assess``: judge a design's documents in a browser (the optional extra
``irsample[assess]``; see docs/assess.md).

- ``assess serve --design DIR --docs PATH --topics PATH --db FILE [--runs RUN...]``: the web
  app on http://127.0.0.1:8765 (``--host``/``--port``; port 0 picks a free one). It prints
  ``serving on URL`` once it listens. One server per database (a second one refuses to start).
  With ``--runs`` the organiser's dashboard shows live estimates and plans rounds.
- ``assess add-assessor --db FILE NAME`` / ``add-organiser``: registers a person and prints the
  personal link; ``reissue NAME`` prints a new link (the old one stops working), ``revoke
  NAME`` stops a link, ``people`` lists everyone.
- ``assess export --db FILE -o FILE``: the current judgments as TREC qrels ``topic assessor
  docno grade`` (the assessor in the iteration column, which qrels readers ignore), one line per
  document, which ``irsample merge`` reads; a document judged by several assessors gets the
  grade chosen by ``--resolve`` (default: the first assessor's). ``--design FILE`` keeps the
  documents that design selected; ``--details FILE`` writes every judgment row ever made, with
  its state (current, revised, withdrawn), assessor, note and time (TSV).
- ``assess next-round --db FILE --runs RUN... --batch N``: plan N more judgments from the
  judgments so far (irsample's planner), draw them and load them as the next round (when no
  server runs; the dashboard has the same button).
"""

from __future__ import annotations

import sys

from ..errors import InputError
from .arguments import number

DEFAULT_PORT = 8765
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
RESOLVE = ("first", "max", "min")


def add_parser(sub) -> None:
    from ..assess import ORDERS

    p = sub.add_parser("assess", help="judge a design's documents in a browser (web app)",
                       description="A judging web app for the documents a design selected; "
                       "judgments are kept in SQLite and exported for irsample merge.")
    cmds = p.add_subparsers(dest="assess_command", required=True)

    s = cmds.add_parser("serve", help="run the web app",
                        description="Serve the judging app until interrupted (one server per "
                        "database).")
    s.add_argument("--design", required=True, metavar="DIR",
                   help="folder written by irsample sample (or its design.json)")
    s.add_argument("--docs", required=True, metavar="PATH",
                   help="documents: TREC SGML (.gz too), JSONL {docno, text}, or a folder")
    s.add_argument("--topics", required=True, metavar="PATH",
                   help="topics: TREC topic file (title, desc, narr) or qid<TAB>title TSV")
    s.add_argument("--db", required=True, metavar="FILE", help="SQLite file of the judgments")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=number(int, minimum=0, below=65536), default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    s.add_argument("--order", choices=ORDERS, default="design",
                   help="design: one document of every (topic, stratum) cell first, then "
                   "stratum by stratum from the top, shuffled within (default); "
                   "topic: the same topic by topic; mtf, mtf-global, hedge: an adaptive method "
                   "over the design's documents (needs --runs)")
    s.add_argument("--runs", nargs="+", metavar="RUN", help="the design's run files (adaptive "
                   "orders; the dashboard's live estimates and next rounds)")
    s.add_argument("--labels", metavar="FILE|fusion", default=None,
                   help="automatic labels: the dashboard adds ppi(M) estimates (as eval "
                   "--auto-labels)")
    s.add_argument("--beta", type=float, default=None, help="Hedge's beta (default 0.1)")
    s.add_argument("--overlap", type=number(float, minimum=0.0), default=0.0, metavar="SHARE",
                   help="share of documents judged by two assessors (default 0)")
    s.add_argument("--seed", type=number(int, minimum=0), default=None,
                   help="seed of the shuffle and the overlap (default: the design's seed)")
    s.add_argument("--grades", default="0-3",
                   help="grades offered, one key each: a range (0-3, default) or a list (0,1)")
    s.add_argument("-l", "--level", type=number(int, minimum=1), default=1,
                   help="lowest relevant grade (adaptive orders, binary agreement, estimates)")
    s.add_argument("--lease", type=number(float, above=0), default=600.0, metavar="SECONDS",
                   help="how long a document handed out stays reserved for its assessor "
                   "without a renewal (default 600; the open judging page renews it)")
    s.add_argument("--batch", type=number(int, minimum=1), default=None, metavar="N",
                   help="the dashboard's default size of a next round (default: round 1's)")
    s.set_defaults(run=cmd_serve)

    for role in ("assessor", "organiser"):
        a = cmds.add_parser(f"add-{role}", help=f"register an {role}; prints the personal link")
        a.add_argument("--db", required=True, metavar="FILE")
        a.add_argument("name", help=f"{role} name (letters, digits, _ . -)")
        a.add_argument("--url", default=None,
                       help="the app's address, for the link (default: that of the server "
                       f"running on this database, else {DEFAULT_URL})")
        a.set_defaults(run=cmd_add_person, role=role)

    r = cmds.add_parser("reissue", help="a new link for a person (the old one stops working)")
    r.add_argument("--db", required=True, metavar="FILE")
    r.add_argument("name")
    r.add_argument("--url", default=None, help="the app's address (default: that of the "
                   f"server running on this database, else {DEFAULT_URL})")
    r.set_defaults(run=cmd_reissue)

    v = cmds.add_parser("revoke", help="stop a person's link (their judgments stay)")
    v.add_argument("--db", required=True, metavar="FILE")
    v.add_argument("name")
    v.set_defaults(run=cmd_revoke)

    pe = cmds.add_parser("people", help="list assessors and organisers with their judgments")
    pe.add_argument("--db", required=True, metavar="FILE")
    pe.set_defaults(run=cmd_people)

    e = cmds.add_parser("export", help="write the judgments as qrels for irsample merge")
    e.add_argument("--db", required=True, metavar="FILE")
    e.add_argument("-o", "--output", required=True, metavar="FILE", help="qrels file to write")
    e.add_argument("--resolve", choices=RESOLVE, default="first",
                   help="grade of a document judged by several assessors (default first)")
    e.add_argument("--design", metavar="FILE", help="only the documents this design file "
                   "selected (what irsample merge FILE accepts)")
    e.add_argument("--details", metavar="FILE",
                   help="also write every judgment row (topic docno stratum assessor grade time "
                   "state note) as TSV")
    e.set_defaults(run=cmd_export)

    n = cmds.add_parser("next-round", help="plan, draw and load the next round of judgments",
                        description="Plan --batch more judgments from the judgments so far "
                        "(irsample's planner, as irsample plan --design --judged), draw them "
                        "and load them into the database as the next round. Refused while a "
                        "server runs on the database (its dashboard has the same button).")
    n.add_argument("--db", required=True, metavar="FILE")
    n.add_argument("--runs", required=True, nargs="+", metavar="RUN",
                   help="the design's run files")
    n.add_argument("--batch", required=True, type=number(int, minimum=1), metavar="N",
                   help="judgments in the new round")
    n.add_argument("--seed", type=number(int, minimum=0), default=None,
                   help="seed of the draw (default: derived from the session's seed)")
    n.add_argument("-l", "--level", type=number(int, minimum=1), default=1,
                   help="lowest relevant grade, as serve -l (default 1): the allocation and "
                   "the statuses read it")
    n.add_argument("-o", dest="outdir", default=None, metavar="DIR",
                   help="folder for the round's design.json and to_judge.tsv (default: "
                   "DB.roundN beside the database)")
    n.set_defaults(run=cmd_next_round)


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


def _listen(host: str, port: int):
    import socket

    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(info[0], socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by connections
        sock.bind(info[4])
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def cmd_serve(args) -> str:
    _need_extra()
    import ipaddress

    import uvicorn

    from ..assess.app import create_app
    from ..assess.dashboard import Live
    from ..assess.lock import ServerLock
    from ..assess.session import Session, parse_grades

    if args.overlap > 1:
        raise InputError(f"--overlap is a share in [0, 1], not {args.overlap}")
    grades = parse_grades(args.grades)
    if args.level > max(grades):
        raise InputError(f"-l {args.level} is above every grade offered ({args.grades}): no "
                         "judgment could count as relevant")
    lock = ServerLock(args.db).acquire()  # before anything else: a second server stops here
    try:
        session = Session.open(args.design, args.docs, args.topics, args.db, order=args.order,
                               overlap=args.overlap, seed=args.seed, grades=grades,
                               runs=args.runs, beta=args.beta, rel_level=args.level,
                               lease_seconds=args.lease)
        sock = _listen(args.host, args.port)
        host, port = sock.getsockname()[:2]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            print(f"irsample: warning: listening on {host}, reachable from other machines; "
                  "links carry tokens over plain HTTP", file=sys.stderr)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/"
        lock.describe(url)
        live = Live(session, args.runs, args.labels, batch=args.batch or 0)
        print(f"serving on {url} ({len(session.store.items())} documents to judge, order "
              f"{args.order}, db {args.db})", flush=True)
        config = uvicorn.Config(create_app(session, live), log_level="warning",
                                access_log=False)
        uvicorn.Server(config).run(sockets=[sock])
        live.close()
        session.store.close()
    finally:
        lock.release()
    return ""


def _link(args, *, new: bool) -> str:
    """``NAME<TAB>URL/login?token=...`` of a person added (``new``) or given a new token; URL
    ``--url``, else the address of the server running on the database, else the default."""
    from ..assess.lock import serving_url
    from ..assess.store import check_person

    if new:  # before the database is created for them
        check_person(args.name, args.role)
    store = _store(args.db, must_exist=not new)
    try:
        token = store.add_person(args.name, args.role) if new else store.reissue(args.name)
    finally:
        store.close()
    url = args.url or serving_url(args.db) or DEFAULT_URL
    return f"{args.name}\t{url.rstrip('/')}/login?token={token}\n"


def cmd_add_person(args) -> str:
    return _link(args, new=True)


def cmd_reissue(args) -> str:
    return _link(args, new=False)


def cmd_revoke(args) -> str:
    store = _store(args.db, must_exist=True)
    try:
        store.revoke(args.name)
    finally:
        store.close()
    print(f"revoked {args.name}'s link (their judgments stay; a new link: irsample assess "
          f"reissue --db {args.db} {args.name})", file=sys.stderr)
    return ""


def cmd_people(args) -> str:
    from ..assess.dashboard import pace

    store = _store(args.db, must_exist=True)
    try:
        people = pace(store.db)
    finally:
        store.close()
    lines = ["name\trole\tstate\tjudgments\trevised\tundone"]
    lines += [f"{p.name}\t{p.role}\t{'revoked' if p.revoked else 'active'}\t{p.judgments}\t"
              f"{p.revised}\t{p.withdrawn}" for p in people]
    return "\n".join(lines) + "\n"


def cmd_export(args) -> str:
    from ..assess.export import export
    from ..io.output import write_atomic

    store = _store(args.db, must_exist=True)
    try:
        exported = export(store.db, args.resolve)
    finally:
        store.close()
    if not exported.judgments:
        raise InputError("no judgments to export", str(args.db))
    qrels = exported.qrels
    if args.design:
        from ..design import DesignRecord

        record = DesignRecord.read(args.design)
        chosen = {(record.qid[i], record.docno[i]) for i in range(len(record.qid))
                  if record.selected[i]}
        lines = qrels.splitlines(keepends=True)
        qrels = "".join(x for x in lines if (x.split()[0], x.split()[2]) in chosen)
        print(f"{len(lines) - qrels.count(chr(10))} documents left out: not selected by "
              f"{args.design}", file=sys.stderr)
    if args.details:
        write_atomic(args.details, exported.details().encode("utf-8", "surrogateescape"))
    print(exported.summary(args.resolve), file=sys.stderr)
    return qrels


def cmd_next_round(args) -> str:
    from ..assess.export import export
    from ..assess.lock import ServerLock
    from ..assess.rounds import draw_round, load_round, plan_round, round_folder
    from ..stats.random import derived_seed

    store = _store(args.db, must_exist=True)
    lock = None
    try:
        config, rounds = store.meta("config"), store.rounds()
        if config is None or not rounds:
            raise InputError("the database has no judging session: serve a design first",
                             str(args.db))
        if config["order"] not in ("design", "topic"):
            raise InputError(f"rounds need the design or topic order, not {config['order']}",
                             str(args.db))
        lock = ServerLock(args.db).acquire()  # no server may hand out documents meanwhile
        number = len(rounds) + 1
        planned = plan_round(rounds, export(store.db).qrels, args.runs, batch=args.batch,
                             rel_level=args.level)
        seed = derived_seed(config["seed"], "draw", number) if args.seed is None else args.seed
        record, path = draw_round(planned, seed, args.outdir or round_folder(args.db, number))
        _check_texts(store, record)
        load_round(store, record, path, order=config["order"], overlap=config["overlap"],
                   seed=config["seed"])
    finally:
        if lock is not None:
            lock.release()
        store.close()
    left = len(record.to_judge_tsv().splitlines()) - 1
    return (f"{planned.summary().rstrip()}\nround {number}: {left} documents to judge, drawn "
            f"with seed {seed}; wrote {path}\n")


def _check_texts(store, record) -> None:
    """Every document of the new round must be in the documents the server was given (the
    database remembers them), else the round is not loaded."""
    from ..assess.documents import read_documents

    sources = store.meta("sources")
    if not sources:
        return  # checked when the server starts
    wanted = {record.docno[i] for i in range(len(record.docno)) if record.selected[i]}
    lost = wanted - set(read_documents(sources["docs"], wanted))
    if lost:
        raise InputError(f"{len(lost)} documents of the new round are not in the documents "
                         f"(e.g. {sorted(lost)[0]!r}); the round is not loaded", sources["docs"])
