"""A stand-in for verifiers v1's ``null`` harness program
(verifiers/v1/harnesses/null/program.py at a60a606), which the runtime
prepares with uv from PyPI (openai, mcp, httpx, tenacity): neither uv nor
those packages can be installed here. It takes the same arguments and, for
a conversation without tools (the persuader's), does what that program
does: one chat completion from the interception endpoint on the system
prompt plus the initial messages (or the prompt), with the standard
library's HTTP client.
"""

import argparse
import json
import os
import urllib.request


def main() -> None:
    ap = argparse.ArgumentParser()
    for name in ("--base-url", "--api-key", "--model"):
        ap.add_argument(name, required=True)
    for name in ("--system-prompt", "--prompt", "--initial-messages-file", "--mcp-config"):
        ap.add_argument(name, default="")
    args = ap.parse_args()
    if json.loads(args.mcp_config or "{}").get("mcpServers"):
        raise SystemExit("null_program stand-in: tools are not supported")
    messages = [{"role": "system", "content": args.system_prompt}] if args.system_prompt else []
    if args.initial_messages_file:
        with open(args.initial_messages_file, "rb") as f:
            messages += json.loads(f.read())
        os.unlink(args.initial_messages_file)
    elif args.prompt:
        messages.append({"role": "user", "content": args.prompt})
    body = json.dumps({"model": args.model, "messages": messages}).encode()
    req = urllib.request.Request(args.base_url.rstrip("/") + "/chat/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + args.api_key})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=120) as r:
        json.loads(r.read())


if __name__ == "__main__":
    main()
