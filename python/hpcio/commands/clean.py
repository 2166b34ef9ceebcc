"""`hpcio clean`: delete hpcio's own files or objects under a target's prefix, nothing else,
and abort the multipart uploads of hpcio's objects that runs left open there."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio import _engine
from hpcio.commands.run import add_store_option_argument, store_options
from hpcio.errors import TargetError
from hpcio.runner import journal
from hpcio.runner.lock import LOCK_KEY
from hpcio.spec.target import TargetSpec
from hpcio.workloads.registry import is_own_key

HELP = "delete hpcio's own files or objects under a target, abort its unfinished uploads"

#: Every name is_own_key accepts starts with this: the store lists only these.
OWN_PREFIX = "hpcio-"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, help="file:///dir, s3://bucket/prefix, ...")
    add_store_option_argument(parser)
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    spec = TargetSpec.from_url(args.target, **store_options(args.store_option))
    try:
        target = _engine.Target(spec.url, options=dict(spec.options))
        # A run's lock goes too: one a killed run left on an object store would block the next.
        keys = [k for k in target.list(OWN_PREFIX) if is_own_key(k) or k == LOCK_KEY]
        # S3 bills for the parts of an upload never completed or aborted: the store's own list
        # finds those of runs on any node; the journal those of this node on other stores.
        uploads = [(k, i) for k, i in target.list_uploads(OWN_PREFIX) if is_own_key(k)]
        if not args.dry_run:
            for key, upload_id in uploads:
                target.abort_upload(key, upload_id)
        removed = 0 if args.dry_run else target.remove(keys)
        aborted = [] if args.dry_run else journal.abort_abandoned(spec.url, spec.options)
    except OSError as e:
        raise TargetError(f"clean: {_plain(e)}") from None
    except ValueError as e:
        raise TargetError(f"clean {spec.url}: {e}") from None
    for key, _ in uploads:
        print(f"{'would abort' if args.dry_run else 'aborted'} the incomplete upload of {key}")
    for key in aborted:
        print(f"aborted the incomplete upload of {key}")
    for key in keys:
        print(f"{'would delete' if args.dry_run else 'deleted'} {key}")
    print(
        f"hpcio clean: {len(keys) if args.dry_run else removed} of hpcio's objects under {spec.url}"
    )
    return 0


def _plain(e: OSError) -> str:
    """The engine's message without Python's "[Errno N]" and Rust's "(os error N)"."""
    text = e.strerror or str(e)
    return text.replace(f" (os error {e.errno})", "") if e.errno else text
