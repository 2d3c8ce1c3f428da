"""``headspace serve`` and ``headspace web``: the resident service, and its phone page."""

from __future__ import annotations

import argparse
import logging
import sys

from .common import EXIT_FAIL, EXIT_OK, UserError, config_of, host_specs, server_of


def _service_of(args: argparse.Namespace, watches: str):
    """The tmux server and its service's place, for a command about the service itself (which takes no view of its own)."""
    from ..shared.resident_place import place_of

    server = server_of(args)
    if getattr(args, "host", None) or getattr(args, "no_local", False):
        raise UserError(f"{watches}: --host and --no-local are not for it")
    return server, place_of(server.identity)


def cmd_serve(args: argparse.Namespace) -> int:
    """The resident service of this tmux server: start it in the background, run it here, stop it, or say how it is."""
    from ..api.errors import ServiceError
    from ..resident import client
    from ..shared.resident_place import PlaceError, facts, is_held, where

    server, place = _service_of(args, "serve watches this tmux server and every configured host")
    if args.stop:
        if not is_held(place):
            print(f"no headspace service runs for {server.where()}")
            return EXIT_OK
        if not client.stop(place):
            raise UserError(f"the service did not end; {where(place)}")
        print(f"stopped the headspace service of {server.where()}")
        return EXIT_OK
    if args.status:
        try:
            card = client.hello(place)
        except ServiceError as exc:
            print(f"no headspace service runs for {server.where()} ({exc})")
            return EXIT_FAIL
        print(f"the headspace service of {server.where()} runs ({facts(place)}); watching {', '.join(card.get('hosts') or []) or 'no host'}")
        web = card.get("web")
        if isinstance(web, dict):
            print(f"its web page: {web.get('scheme')}://{web.get('host')}:{web.get('port')}/{' (read-only)' if web.get('read_only') else ''} (headspace web prints the address with its token)")
        return EXIT_OK
    if args.foreground:
        return _serve_here(args, server, place)
    if is_held(place):
        raise UserError(where(place))
    config_of(args)  # a broken config is said here, in one line, not lost in the background
    if server.server_pid() is None:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to serve")
    from ..resident.start import log_path, start_detached

    try:
        card = start_detached(server.socket_args(), place, config=args.config)
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"the service did not start: {exc}") from None
    print(f"headspace service started for {server.where()} (pid {card.get('pid')}); it ends with its tmux server; log: {log_path()}")
    return EXIT_OK


def cmd_web(args: argparse.Namespace) -> int:
    """``headspace web``: the resident service's web page on (the service started first when none runs), and how to reach it."""
    from dataclasses import replace

    from ..api.errors import ServiceError
    from ..resident import client
    from ..shared.config import WebConfig
    from ..shared.resident_place import PlaceError, is_held
    from ..web import listen

    server, place = _service_of(args, "the page shows what the service watches (this tmux server and every configured host; add a host to the config)")
    if args.off:
        if not is_held(place):
            print(f"no headspace service runs for {server.where()}: the page is off")
            return EXIT_OK
        try:
            client.ask(place, "web", {"off": True})
        except ServiceError as exc:
            raise UserError(f"the page could not be turned off: {exc}") from None
        print(f"the web page of {server.where()} is off")
        return EXIT_OK
    config = config_of(args)
    web = config.web
    explicit = bool(args.listen or args.tls or args.token_file or args.read_only or args.insecure_network)
    if not explicit and is_held(place):
        try:
            said = client.ask(place, "web", {"keep": True})
        except ServiceError:
            said = {}
        if said.get("url") and isinstance(said.get("web"), dict):
            return _print_web(server, str(said["url"]), said["web"], qr=not args.no_qr)  # on already: where it is, as it is
    # The flags over [web] over the defaults: one set of settings, checked in one place.
    base = web or WebConfig()
    given = replace(
        base,
        listen=args.listen or base.listen,
        token_file=args.token_file or base.token_file,
        read_only=args.read_only or base.read_only,
        insecure_network=args.insecure_network or base.insecure_network,
        tls_cert=args.tls[0] if args.tls else base.tls_cert,
        tls_key=args.tls[1] if args.tls else base.tls_key,
    )
    try:
        options = listen.from_config(given)
    except listen.ListenError as exc:
        raise UserError(str(exc)) from None
    if server.server_pid() is None:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to show")
    if not is_held(place):
        from ..resident.start import start_service

        try:
            start_service(server, place, args.config)
        except (ServiceError, PlaceError) as exc:
            raise UserError(f"the service did not start: {exc}") from None
    body = {"host": options.host, "port": options.port, "token": options.token, "read_only": options.read_only, "tls": list(options.tls) if options.tls else None}
    try:
        said = client.ask(place, "web", body)
    except ServiceError as exc:
        raise UserError(f"the page is not on: {exc}") from None
    card = {"host": options.host, "port": options.port, "scheme": options.scheme, "read_only": options.read_only}
    return _print_web(server, str(said.get("url", "")), card, qr=not args.no_qr)


def _print_web(server, url: str, card: dict, *, qr: bool) -> int:
    """Where the page is: its address with the token on a line of its own, a QR code of it, and how to reach a loopback one."""
    from ..web import listen

    listened, port = str(card.get("host")), card.get("port")
    host = listen.shown_host(listened)
    if host != listened:
        url = url.replace(f"//{listened}:", f"//{host}:", 1)
    print(f"headspace web: the page of {server.where()} is served at {card.get('scheme')}://{host}:{port}/{' (read-only)' if card.get('read_only') else ''}")
    print("open this address (it carries the access token; keep it to yourself):")
    print(url)
    if qr:
        import segno

        segno.make(url, error="l").terminal(out=sys.stdout, compact=True)
    if listen.loopback(listened):
        print(f"from another machine: ssh -L {port}:{listened}:{port} <this machine>, then open the address there")
    return EXIT_OK


def _serve_here(args: argparse.Namespace, server, place) -> int:
    """``serve --foreground``: hold the lock and serve in this process until the tmux server ends."""
    import functools
    import os

    from ..resident.ringer import Ringer
    from ..resident.server import Watched, serve
    from ..resident.start import log_path
    from ..service.facade import Service
    from ..service.records.journal import Journal
    from ..shared import logfile
    from ..shared.resident_place import PlaceError

    log = logging.getLogger("headspace_tui.resident")
    logfile.setup(log_path())
    from . import leftovers

    leftovers.sweep()  # what a SIGKILLed headspace left (its socket, its ssh control folders)
    try:
        config = config_of(args)
        local, specs = host_specs(args, config)
        if server.server_pid() is None:
            raise UserError(f"no tmux server runs ({server.where()}): nothing to serve")
    except UserError as exc:
        log.error("%s", exc)  # a service started in the background has only its log to say it in
        raise
    journal, problem = Journal.open()
    if problem:
        log.warning("%s", problem)
    try:
        service = Service.build(server, config=config, journal=journal, hosts=specs, local=local)
        ring = functools.partial(Ringer, config=config, socket_file=server.socket_file(), env=dict(os.environ))
        config_path = str(args.config.resolve()) if args.config is not None else None
        web = None
        if config.web is not None:
            from ..web import listen

            try:
                web = listen.from_config(config.web)
            except listen.ListenError as exc:
                log.warning("[web]: %s; the page stays off", exc)
        why = serve(service, Watched(server.identity, server.where(), server.server_pid), place, ring, config_path=config_path, web_on_start=web)
    except PlaceError as exc:
        log.error("%s", exc)
        raise UserError(str(exc)) from None
    finally:
        journal.close()
    print(f"headspace service ended: {why}", file=sys.stderr)
    return EXIT_OK
