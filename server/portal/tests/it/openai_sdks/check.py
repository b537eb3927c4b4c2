"""What the official `openai` Python package (PyPI) sees of the portal's OpenAI-compatible API.

Run by server/portal/tests/it/openai_api.rs with the portal's /v1 address and keys in the
environment; prints its observations as one JSON object, which the Rust test checks.
"""

import json
import os

import openai
from openai import OpenAI

BASE = os.environ["PORTAL_V1"]


def client(key):
    return OpenAI(base_url=BASE, api_key=key, max_retries=0, timeout=60)


def error_of(call):
    """The class of the exception `call` raises, and its message."""
    try:
        call()
    except openai.APIStatusError as error:
        return [type(error).__name__, error.status_code, error.message]
    return ["no error"]


alice = client(os.environ["ALICE_KEY"])
seen = {}
seen["models"] = sorted(model.id for model in alice.models.list())
seen["scoped_models"] = sorted(
    model.id for model in client(os.environ["SCOPED_KEY"]).models.list()
)

question = [{"role": "user", "content": "Tell me about herons"}]
whole = alice.chat.completions.create(model="helper", messages=question)
portal = whole.model_extra["portal"]
seen["whole"] = {
    "content": whole.choices[0].message.content,
    "role": whole.choices[0].message.role,
    "finish": whole.choices[0].finish_reason,
    "prompt_tokens": whole.usage.prompt_tokens,
    "completion_tokens": whole.usage.completion_tokens,
    "total_tokens": whole.usage.total_tokens,
    "status": portal["status"],
    "conversation": portal["conversation"],
}

history = question + [
    {"role": "assistant", "content": whole.choices[0].message.content},
    {"role": "user", "content": "And where do they nest?"},
]
more = alice.chat.completions.create(
    model="helper",
    messages=history,
    extra_body={"conversation": portal["conversation"]},
)
seen["continued"] = {
    "content": more.choices[0].message.content,
    "conversation": more.model_extra["portal"]["conversation"],
    "turn": more.model_extra["portal"]["turn"],
}

chunks = alice.chat.completions.create(
    model="helper",
    messages=question,
    stream=True,
    stream_options={"include_usage": True},
)
text, count, usage, finish = "", 0, None, None
for chunk in chunks:
    count += 1
    if chunk.choices:
        text += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    if chunk.usage:
        usage = chunk.usage.total_tokens
seen["streamed"] = {"content": text, "chunks": count, "total_tokens": usage, "finish": finish}

tool = alice.chat.completions.create(
    model="worker",
    messages=[{"role": "user", "content": 'Please use everything__get-sum with {"a": 2, "b": 3}'}],
)
seen["tool"] = tool.choices[0].message.content

seen["errors"] = {
    "wrong_key": error_of(lambda: client("psk_not-a-key").models.list()),
    "revoked": error_of(lambda: client(os.environ["REVOKED_KEY"]).models.list()),
    "other_organisation": error_of(
        lambda: client(os.environ["GLOBEX_KEY"]).chat.completions.create(
            model="worker", messages=question
        )
    ),
    "outside_the_key": error_of(
        lambda: client(os.environ["SCOPED_KEY"]).chat.completions.create(
            model="worker", messages=question
        )
    ),
    # The first message of the day spends past the 10 tokens of tiny's quota; the next is
    # refused.
    "quota": [
        error_of(
            lambda: client(os.environ["TINY_KEY"]).chat.completions.create(
                model="helper", messages=question
            )
        )
        for _ in range(2)
    ][-1],
    "client_tools": error_of(
        lambda: alice.chat.completions.create(
            model="helper",
            messages=question,
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
        )
    ),
}
print(json.dumps(seen))
