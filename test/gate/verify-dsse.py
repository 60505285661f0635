"""Independent DSSE verifier: PAE + Ed25519 with securesystemslib (and cryptography for the PEM).

usage: verify-dsse.py ENVELOPE.json PUBLIC.pem  -> prints the statement's _type; exit 0 iff valid.
"""
import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from securesystemslib.signer import Signature, SSlibKey


def pae(payload_type: str, body: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def main() -> int:
    env = json.load(open(sys.argv[1]))
    pem = open(sys.argv[2], "rb").read()
    pub = serialization.load_pem_public_key(pem)
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    der = pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    keyid = hashlib.sha256(der).hexdigest()
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})
    body = base64.b64decode(env["payload"])
    message = pae(env["payloadType"], body)
    for s in env["signatures"]:
        if s["keyid"] != keyid:
            continue
        try:
            key.verify_signature(Signature(keyid, base64.b64decode(s["sig"]).hex()), message)
        except Exception as e:  # securesystemslib raises UnverifiedSignatureError
            print(f"invalid: {type(e).__name__}")
            return 1
        statement = json.loads(body)
        print(statement["_type"], statement["predicateType"], env["payloadType"])
        return 0
    print("invalid: no signature with keyid " + keyid)
    return 1


sys.exit(main())
