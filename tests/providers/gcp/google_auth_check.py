"""Cross-checks plinth_gcp_auth against Debian's python3-google-auth.

usage: /usr/bin/python3 google_auth_check.py < JOB.json

JOB is one JSON object; every key present is one check, and the answer (one
JSON object on stdout) has the same keys:

  "verify":  {"token": JWT, "public_key": PEM, "audience": AUD}
             -> {"ok": true, "header": {...}, "payload": {...}} when
                google.auth.jwt.decode accepts it (signature, iat/exp, aud),
                else {"ok": false, "error": str}
  "sign":    {"private_key": PEM, "input": STR}
             -> {"signature": base64url (no padding) of google.auth.crypt's
                RS256 signature of STR}
  "assert":  {"key_file": PATH, "scopes": [..]}
             -> {"assertion": what google.oauth2.service_account.Credentials
                sends to token_uri, "jwt_encode": google.auth.jwt.encode of the
                same claims with the key file's signer}
"""
import base64
import json
import sys

from google.auth import crypt
from google.auth import jwt
from google.oauth2 import service_account


def verify(job):
    try:
        payload = jwt.decode(job["token"], certs=job["public_key"], audience=job["audience"])
        return {"ok": True, "header": jwt.decode_header(job["token"]), "payload": payload}
    except ValueError as e:
        return {"ok": False, "error": str(e)}


def sign(job):
    signer = crypt.RSASigner.from_string(job["private_key"])
    sig = signer.sign(job["input"].encode("utf-8"))
    return {"signature": base64.urlsafe_b64encode(sig).decode("ascii").rstrip("=")}


def assertion(job):
    creds = service_account.Credentials.from_service_account_file(job["key_file"], scopes=job["scopes"])
    # The assertion Credentials.refresh() POSTs to token_uri (google-auth 1.x keeps it private).
    made = creds._make_authorization_grant_assertion()
    info = json.load(open(job["key_file"]))
    signer = crypt.RSASigner.from_service_account_info(info)
    claims = jwt.decode(made, verify=False)
    encoded = jwt.encode(signer, claims)
    as_text = lambda b: b.decode("ascii") if isinstance(b, bytes) else b
    return {"assertion": as_text(made), "jwt_encode": as_text(encoded)}


def main():
    job = json.load(sys.stdin)
    out = {}
    if "verify" in job:
        out["verify"] = verify(job["verify"])
    if "sign" in job:
        out["sign"] = sign(job["sign"])
    if "assert" in job:
        out["assert"] = assertion(job["assert"])
    print(json.dumps(out))


main()
