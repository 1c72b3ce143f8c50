"""Judge stored traces with Ray Data: ``map_batches`` with one Judge per actor.

For teams that judge millions of stored traces against self-hosted System One servers: each
actor of the pool builds one ``jevjudge.Judge`` (one client, one adaptive limiter) for one of
the servers, taken round-robin from a small ``ServerPool`` actor, and reviews its batches with
``review_async`` (``in_flight`` reviews at once). Rows come back with the verdict's status, its
findings as JSON, the answering model and the server that answered.

    python examples/ray/judge_traces.py --definition DEF.toml --cases CASES.jsonl \\
        --base-url http://10.0.0.5:8080 --base-url http://10.0.0.6:8080 --actors 2

The key is read from TYPESAFE_API_KEY (or the variable --api-key-env names) on every worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any, Dict, List, Optional

import pandas
import ray

import jevjudge


@ray.remote(num_cpus=0)
class ServerPool:
    """Hands out the servers round-robin, one to each actor as it starts."""

    def __init__(self, urls: List[str]) -> None:
        self.urls = urls
        self.taken = 0

    def take(self) -> str:
        url = self.urls[self.taken % len(self.urls)]
        self.taken += 1
        return url


class JudgeActor:
    """One Judge per actor; a batch is a DataFrame with `id` and `state` (JSON text)."""

    def __init__(
        self,
        definition_toml: str,
        pool: Any,
        api_key_env: Optional[str] = None,
        budget: float = 2.0,
        in_flight: int = 16,
    ) -> None:
        self.server = ray.get(pool.take.remote())
        self.judge = jevjudge.Judge(
            jevjudge.Definition.from_toml(definition_toml),
            base_url=self.server,
            api_key_env=api_key_env,
            budget=budget,
            max_in_flight=in_flight,
        )

    def __call__(self, batch: pandas.DataFrame) -> pandas.DataFrame:
        states = [json.loads(text) for text in batch["state"]]
        results = asyncio.run(self._review(states))
        out = batch.drop(columns=["state"])
        out["status"] = [r.status for r in results]
        out["error"] = [r.error for r in results]
        out["findings"] = [json.dumps(r.findings) for r in results]
        out["model"] = [r.model for r in results]
        out["server"] = self.server
        return out

    async def _review(self, states: List[Any]) -> List[jevjudge.Result]:
        return list(await asyncio.gather(*(self.judge.review_async(s) for s in states)))


def judge_cases(
    definition_path: str,
    cases: List[Dict[str, Any]],
    base_urls: List[str],
    *,
    actors: int = 2,
    batch_size: int = 64,
    api_key_env: Optional[str] = None,
    budget: float = 2.0,
) -> pandas.DataFrame:
    """Judges `cases` (dicts with `id` and `state`, as in the cases format) on a Ray actor pool."""
    with open(definition_path, encoding="utf-8") as file:
        definition_toml = file.read()
    pool = ServerPool.remote(base_urls)  # type: ignore[attr-defined]
    rows = [
        {"id": case["id"], "expected_pass": case["expected_pass"], "state": json.dumps(case["state"])}
        for case in cases
    ]
    judged = ray.data.from_items(rows).map_batches(
        JudgeActor,
        fn_constructor_kwargs={
            "definition_toml": definition_toml,
            "pool": pool,
            "api_key_env": api_key_env,
            "budget": budget,
        },
        compute=ray.data.ActorPoolStrategy(size=actors),
        batch_size=batch_size,
        batch_format="pandas",
        num_cpus=0.5,
    )
    return judged.to_pandas()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definition", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--base-url", action="append", required=True)
    parser.add_argument("--api-key-env")
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--budget", type=float, default=2.0)
    args = parser.parse_args()
    with open(args.cases, encoding="utf-8") as file:
        cases = [json.loads(line) for line in file if line.strip()]
    ray.init()
    frame = judge_cases(
        args.definition, cases, args.base_url, actors=args.actors, api_key_env=args.api_key_env, budget=args.budget
    )
    print(frame.groupby(["server", "status"]).size().to_string())


if __name__ == "__main__":
    main()
