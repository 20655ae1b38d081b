"""The migration cache: task results by content key, in SQLite (WAL mode), committed one task at a time so that
a run killed at any point loses only the tasks that were in flight."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

from xlate import __version__

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    rel TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL,
    xlate TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    finished REAL,
    tasks INTEGER,
    options TEXT
);
"""


class ResultCache:
    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Only the driver process writes; workers return results to it. isolation_level=None: explicit commits.
        self.db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable across a killed process (the WAL survives); only a power loss may drop the last commit.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.run_id: int | None = None

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM results")}

    def put(self, key: str, rel: str, result: dict[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO results (key, rel, status, result, created, xlate) VALUES (?, ?, ?, ?, ?, ?)",
                        (key, rel, result.get("status", "?"), json.dumps(result, default=str), time.time(), __version__))

    def delete(self, key: str) -> None:
        self.db.execute("DELETE FROM results WHERE key = ?", (key,))

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def start_run(self, tasks: int, options: dict[str, Any]) -> None:
        cur = self.db.execute("INSERT INTO runs (started, tasks, options) VALUES (?, ?, ?)",
                              (time.time(), tasks, json.dumps(options, default=str)))
        self.run_id = cur.lastrowid

    def finish_run(self) -> None:
        if self.run_id is not None:
            self.db.execute("UPDATE runs SET finished = ? WHERE id = ?", (time.time(), self.run_id))

    def close(self) -> None:
        self.db.close()
