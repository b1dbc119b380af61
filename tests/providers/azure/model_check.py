#!/usr/bin/python3
"""Checks request bodies against the Azure SDK for Python's models, which are
generated from Azure's REST API specs (azure-rest-api-specs): every key a body
holds must be a property of the model (by its wire name), with a value of the
property's type. Usage: model_check.py MODULE MODEL BODY.json
(e.g. azure.mgmt.compute.v2022_08_01.models VirtualMachine vm.json).
Prints "ok" or one line per problem and exits 1."""
import importlib
import json
import re
import sys


def wire_tree(cls):
    """The model's wire keys as a tree: {'properties': {'hardwareProfile': TYPE}}."""
    tree = {}
    for _, spec in cls._attribute_map.items():
        parts = [p.replace("\\.", ".") for p in re.split(r"(?<!\\)\.", spec["key"])]
        node = tree
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = spec["type"]
    return tree


def check(models, value, typ, path, problems):
    if isinstance(typ, dict):  # a flattened level of a model
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object")
            return
        for k, v in value.items():
            if k not in typ:
                problems.append(f"{path}.{k}: not a property (known: {', '.join(sorted(typ))})")
            else:
                check(models, v, typ[k], f"{path}.{k}", problems)
        return
    if typ.startswith("[") and typ.endswith("]"):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list")
            return
        for i, v in enumerate(value):
            check(models, v, typ[1:-1], f"{path}[{i}]", problems)
        return
    if typ.startswith("{") and typ.endswith("}"):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map")
            return
        for k, v in value.items():
            check(models, v, typ[1:-1], f"{path}.{k}", problems)
        return
    basic = {"str": str, "bool": bool, "int": int, "float": (int, float), "long": int,
             "iso-8601": str, "base64": str, "object": object, "duration": str}
    if typ in basic:
        if not isinstance(value, basic[typ]) or (typ in ("int", "float", "long") and isinstance(value, bool)):
            problems.append(f"{path}: expected {typ}, got {json.dumps(value)}")
        return
    cls = getattr(models, typ, None)
    if cls is None:
        problems.append(f"{path}: unknown type {typ}")
        return
    if hasattr(cls, "_attribute_map") and cls._attribute_map:
        check(models, value, wire_tree(cls), path, problems)
    elif not isinstance(value, str):  # an enum
        problems.append(f"{path}: expected a {typ} value (string)")


def main():
    module, model, body_file = sys.argv[1:4]
    models = importlib.import_module(module)
    with open(body_file) as f:
        body = json.load(f)
    problems = []
    check(models, body, model, model, problems)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
