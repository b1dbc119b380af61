#!/usr/bin/python3
"""Drives aws-ec2-emulator with Debian's real AWS clients for
aws_ec2_emulator_test.cpp, and prints what happened as JSON on stdout.

  botocore_driver.py ENDPOINT CA calls < steps.json
      Runs botocore calls. Each step is
        {"op": "DescribeInstances", "params": {...}}            one call
        {"paginate": "DescribeInstances", "params": {...},
         "page_size": 5}                                         botocore's paginator
        {"control": "POST", "path": "/__emulator/reclaim", "body": {...}}
                                                                 an emulator control call
        plus optional "client": {"access_key", "secret_key", "session_token",
        "region", "skew_seconds", "max_attempts" (total tries, default 1)} for
        that step; retries follow botocore's standard mode. A string
        "${N:EXPR}" anywhere in a step is replaced by the JMESPath EXPR over
        step N's result (e.g. "${0:Instances[0].InstanceId}").
      Prints one result per step: {"ok": <parsed response>} or
      {"error": {"code", "message", "status", "request_id"}} (botocore's
      ClientError) or {"exception": "<class>: <message>"} (no answer at all).

  botocore_driver.py ENDPOINT CA cli < commands.json
      Runs AWS CLI commands (lists of arguments after `aws`, to which
      --endpoint-url ENDPOINT --ca-bundle CA --output json are added) in this
      one interpreter through awscli.clidriver, the code /usr/bin/aws runs, so
      a dozen commands do not pay a dozen interpreter start-ups. Prints
      {"rc", "stdout", "stderr"} per command.

Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_DEFAULT_REGION unless a step overrides them. HOME must point at an empty
directory so no user configuration is read.
"""
import contextlib
import datetime
import io
import json
import sys
import types


def jsonable(value):
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def signer_modules():
    """The modules whose datetime.utcnow() botocore's SigV4 signers read:
    botocore.auth, and botocore.crt.auth when awscrt is installed (Debian's
    python3-awscrt: botocore then signs with AWS's C library)."""
    import botocore.auth

    mods = [botocore.auth]
    try:
        import botocore.crt.auth

        mods.append(botocore.crt.auth)
    except ImportError:
        pass
    return mods


def set_clock_skew(seconds):
    """Makes botocore's signers believe the clock is `seconds` off (0: real)."""
    real = datetime.datetime

    class Skewed(real):
        @classmethod
        def utcnow(cls):
            return real.utcnow() + datetime.timedelta(seconds=seconds)

    shim = types.SimpleNamespace(datetime=Skewed, timedelta=datetime.timedelta, timezone=datetime.timezone)
    for mod in signer_modules():
        mod.datetime = shim if seconds else datetime


def make_client(endpoint, ca, spec):
    import botocore.config
    import botocore.session

    session = botocore.session.get_session()
    kwargs = {}
    if "access_key" in spec:
        kwargs["aws_access_key_id"] = spec["access_key"]
        kwargs["aws_secret_access_key"] = spec["secret_key"]
        if spec.get("session_token"):
            kwargs["aws_session_token"] = spec["session_token"]
    config = botocore.config.Config(
        retries={"total_max_attempts": spec.get("max_attempts", 1), "mode": "standard"},
        connect_timeout=10,
        read_timeout=30,
    )
    return session.create_client(
        "ec2", region_name=spec.get("region"), endpoint_url=endpoint, verify=ca, config=config, **kwargs
    )


def substitute(value, results):
    import jmespath

    if isinstance(value, dict):
        return {k: substitute(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, results) for v in value]
    if isinstance(value, str) and value.startswith("${") and value.endswith("}") and ":" in value:
        n, expr = value[2:-1].split(":", 1)
        return jmespath.search(expr, results[int(n)].get("ok"))
    return value


def control(endpoint, ca, step):
    import ssl
    import urllib.error
    import urllib.request

    data = json.dumps(step.get("body", {})).encode() if step["control"] == "POST" else None
    req = urllib.request.Request(endpoint + step["path"], data=data, method=step["control"],
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ssl.create_default_context(cafile=ca)) as r:
            return {"ok": json.loads(r.read())}
    except urllib.error.HTTPError as e:
        return {"error": {"status": e.code, "body": json.loads(e.read() or b"{}")}}


def run_calls(endpoint, ca, steps):
    import botocore.exceptions

    clients = {}
    results = []
    for step in steps:
        step = substitute(step, results)
        if "control" in step:
            results.append(control(endpoint, ca, step))
            continue
        spec = step.get("client", {})
        key = json.dumps(spec, sort_keys=True)
        if key not in clients:
            clients[key] = make_client(endpoint, ca, spec)
        client = clients[key]
        set_clock_skew(spec.get("skew_seconds", 0))
        try:
            if "paginate" in step:
                paginator = client.get_paginator(snake(step["paginate"]))
                pages = paginator.paginate(**step.get("params", {}),
                                           PaginationConfig={"PageSize": step["page_size"]})
                out = [jsonable(page) for page in pages]
                results.append({"ok": out})
            else:
                method = getattr(client, snake(step["op"]))
                results.append({"ok": jsonable(method(**step.get("params", {})))})
        except botocore.exceptions.ClientError as e:
            err = e.response.get("Error", {})
            meta = e.response.get("ResponseMetadata", {})
            results.append({"error": {"code": err.get("Code"), "message": err.get("Message"),
                                      "status": meta.get("HTTPStatusCode"),
                                      "request_id": meta.get("RequestId"),
                                      "attempts": meta.get("RetryAttempts", 0) + 1}})
        except Exception as e:  # no answer: connection closed, timeout, ...
            results.append({"exception": "%s: %s" % (type(e).__name__, e)})
    set_clock_skew(0)
    return results


def snake(name):
    import botocore

    return botocore.xform_name(name)


def run_cli(endpoint, ca, commands):
    from awscli.clidriver import create_clidriver

    results = []
    for args in commands:
        args = args + ["--endpoint-url", endpoint, "--ca-bundle", ca, "--output", "json"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = create_clidriver().main(args)
            except SystemExit as e:
                rc = e.code
        results.append({"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()})
    return results


def main():
    endpoint, ca, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    steps = json.load(sys.stdin)
    if mode == "calls":
        print(json.dumps(run_calls(endpoint, ca, steps)))
    elif mode == "cli":
        print(json.dumps(run_cli(endpoint, ca, steps)))
    else:
        sys.exit("unknown mode %r (calls or cli)" % mode)


if __name__ == "__main__":
    main()
