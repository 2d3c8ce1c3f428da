"""A Web Push message's cryptography: the service's VAPID key (RFC 8292) and the payload's encryption (RFC 8291, aes128gcm).

Why our own and not pywebpush: the two RFCs are a page of HKDF, ECDH and
AES-GCM over ``cryptography``, while pywebpush would bring requests and a
second HTTP client beside the service's aiohttp.  The tests hold this
against the reference implementations (http-ece decrypts what this
encrypts; py-vapid verifies what this signs), so the reading is the
standard's and not only ours.

Pure but for the key file: no network, no clock of its own.  Imported
only when a phone subscribes or a push goes (web/push.py): its OpenSSL
bindings cost the service 8 MB it need not hold while no phone asked.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..shared.safe_files import Unreadable, read_regular

KEY_FILE_MAX = 4096  # bytes: one PEM private key
RECORD_SIZE = 4096  # the record size written in the header: one record holds any payload we send
# A push service need take no body over 4096 bytes (RFC 8291 section 4): less the header (86), the delimiter and the tag.
PAYLOAD_MAX = 4096 - 86 - 1 - 16
TOKEN_LIFE = 12 * 3600  # seconds a VAPID token is valid (the RFC's limit is 24 h)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """A base64url string (padded or not) as bytes; ValueError when it is not one."""
    if not isinstance(text, str) or not text or len(text) > 1024:
        raise ValueError("not a base64url string")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not a base64url string") from exc


def _point(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


class VapidKey:
    """The service's signing key: its public half is the page's ``applicationServerKey``; its private half signs each push."""

    def __init__(self, private: ec.EllipticCurvePrivateKey) -> None:
        self.private = private
        self.public = b64url(_point(private.public_key()))

    @classmethod
    def kept(cls, path: Path) -> VapidKey:
        """The key kept at ``path``, made (0600, in a 0700 folder) when there is none; ValueError when the file is not a key."""
        try:
            pem = read_regular(path, KEY_FILE_MAX)
        except FileNotFoundError:
            made = cls._made(path)
            if made is not None:
                return made
            pem = read_regular(path, KEY_FILE_MAX)  # another service made it first: that one is everyone's
        except (OSError, Unreadable) as exc:
            raise ValueError(f"the push key {path} cannot be read: {exc}") from None
        try:
            loaded = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"the push key {path} is not a key: {exc}") from None
        if not isinstance(loaded, ec.EllipticCurvePrivateKey) or not isinstance(loaded.curve, ec.SECP256R1):
            raise ValueError(f"the push key {path} is not a P-256 key")
        return cls(loaded)

    @classmethod
    def _made(cls, path: Path) -> VapidKey | None:
        """A new key, written whole at ``path`` (0600) unless another service wrote one first (then None: read that one)."""
        private = ec.generate_private_key(ec.SECP256R1())
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        temporary = path.with_name(f"{path.name}.{os.getpid()}.new")
        with open(temporary, "wb", opener=lambda p, f: os.open(p, f | os.O_TRUNC, 0o600)) as out:
            out.write(pem)
        try:
            os.link(temporary, path)  # whole or not at all, and never over a key another service made meanwhile
        except FileExistsError:
            return None
        finally:
            os.unlink(temporary)
        return cls(private)

    def authorization(self, endpoint: str, now: float, subject: str) -> str:
        """The ``Authorization`` header for a push to ``endpoint`` (RFC 8292 ``vapid``): a fresh ES256 token for its origin."""
        parts = urlsplit(endpoint)
        claims = {"aud": f"{parts.scheme}://{parts.netloc}", "exp": int(now) + TOKEN_LIFE, "sub": subject}
        header = b64url(json.dumps({"typ": "JWT", "alg": "ES256"}, separators=(",", ":")).encode())
        body = b64url(json.dumps(claims, separators=(",", ":")).encode())
        signed = f"{header}.{body}".encode("ascii")
        r, s = decode_dss_signature(self.private.sign(signed, ec.ECDSA(hashes.SHA256())))
        signature = b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
        return f"vapid t={header}.{body}.{signature}, k={self.public}"


def check_keys(p256dh: str, auth: str) -> None:
    """ValueError naming what is not a key: a browser's P-256 public key (``p256dh``) and its 16-byte secret (``auth``), both base64url."""
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(p256dh))
    except ValueError:
        raise ValueError("keys.p256dh: not a P-256 public key") from None
    if len(unb64url(auth)) != 16:
        raise ValueError("keys.auth: not 16 bytes")


def _hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def encrypt(payload: bytes, p256dh: str, auth: str, *, salt: bytes | None = None, sender: ec.EllipticCurvePrivateKey | None = None) -> bytes:
    """``payload`` as the body of one push to the browser whose keys are ``p256dh`` and ``auth`` (RFC 8291 over RFC 8188 ``aes128gcm``, one record).

    A fresh key pair and salt per message (``salt`` and ``sender`` only for
    a test's fixed vector).
    """
    receiver_point = unb64url(p256dh)
    receiver = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), receiver_point)
    sender = sender or ec.generate_private_key(ec.SECP256R1())
    sender_point = _point(sender.public_key())
    salt = salt or secrets.token_bytes(16)
    shared = sender.exchange(ec.ECDH(), receiver)
    ikm = _hkdf(unb64url(auth), shared, b"WebPush: info\x00" + receiver_point + sender_point, 32)
    key = _hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = _hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    if len(payload) > PAYLOAD_MAX:
        raise ValueError(f"a push payload holds at most {PAYLOAD_MAX} bytes")
    sealed = AESGCM(key).encrypt(nonce, payload + b"\x02", None)  # 0x02: the last record's delimiter, no padding
    return salt + RECORD_SIZE.to_bytes(4, "big") + bytes([len(sender_point)]) + sender_point + sealed
