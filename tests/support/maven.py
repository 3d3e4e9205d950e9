"""Java components for the tests, fetched from Maven Central with the machine's `mvn`.

Nothing is installed by hand: a component is a list of Maven coordinates; `classpath`
writes a throwaway pom naming them and runs `mvn dependency:copy-dependencies` into a
directory of its own under the cache (`$TICDC_TEST_CACHE`, default
`~/.cache/ticdc-sink-tests`), keyed by the coordinates, so a second run on the machine
reuses it. Maven's local repository (`~/.m2`) is the download cache underneath; on a fresh
machine the first fetch of a component takes about a minute.

| function | gives |
| --- | --- |
| `classpath(name, coordinates)` | a directory of jars: the coordinates and their dependencies |
| `artifact(coordinate)` | one file (`group:artifact:version:type[:classifier]`), e.g. a tar.gz |
| `java_at_least(major)` | a `java` binary of that major version or newer, or None |
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = [
    "CACHE",
    "MavenError",
    "artifact",
    "classpath",
    "java_at_least",
    "java_major",
    "stop_java",
]

CACHE = Path(os.environ.get("TICDC_TEST_CACHE", Path.home() / ".cache" / "ticdc-sink-tests"))

# A complete directory holds this file; a fetch cut short leaves none and is redone.
_DONE = ".fetched"


class MavenError(RuntimeError):
    """`mvn` could not give a component (its output's tail is in the message)."""


def classpath(name: str, coordinates: list[str]) -> Path:
    """A directory holding the jars of `coordinates` (`group:artifact:version`) and their
    runtime dependencies; fetched once per machine.

    Raises:
        MavenError: `mvn` is missing or failed.
    """
    key = hashlib.sha256("\n".join(sorted(coordinates)).encode()).hexdigest()[:12]
    target = CACHE / f"{name}-{key}"
    if (target / _DONE).exists():
        return target
    dependencies = "\n".join(_dependency_xml(coordinate) for coordinate in coordinates)
    pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ticdc-sink-tests</groupId><artifactId>{name}</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".maven-{name}-", dir=CACHE) as work:
        (Path(work) / "pom.xml").write_text(pom)
        partial = Path(work) / "libs"
        _mvn(
            [
                "dependency:copy-dependencies",
                "-DincludeScope=runtime",
                f"-DoutputDirectory={partial}",
            ],
            cwd=Path(work),
            what=f"{name} ({', '.join(coordinates)})",
        )
        _install(partial, target)
    return target


def artifact(coordinate: str) -> Path:
    """One artifact file, e.g. `io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all`.

    Raises:
        MavenError: `mvn` is missing or failed.
    """
    key = hashlib.sha256(coordinate.encode()).hexdigest()[:12]
    target = CACHE / f"artifact-{key}"
    if (target / _DONE).exists():
        return next(p for p in target.iterdir() if p.name != _DONE)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".maven-artifact-", dir=CACHE) as work:
        partial = Path(work) / "out"
        _mvn(
            ["dependency:copy", f"-Dartifact={coordinate}", f"-DoutputDirectory={partial}"],
            cwd=Path(work),
            what=coordinate,
        )
        _install(partial, target)
    return next(p for p in target.iterdir() if p.name != _DONE)


def java_major(java: str) -> int | None:
    """The major version `java -version` reports, or None if it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if found is None:
        return None
    major = int(found.group(1))
    # "1.8.0" is Java 8
    return int(found.group(2)) if major == 1 and found.group(2) else major


def java_at_least(major: int) -> str | None:
    """A `java` of version `major` or newer: `$JAVA_HOME`'s, the one on PATH, then the JDKs
    in /usr/lib/jvm (newest first); None if there is none."""
    candidates: list[str] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    jvms = Path("/usr/lib/jvm")
    if jvms.is_dir():
        candidates += [str(p / "bin" / "java") for p in sorted(jvms.iterdir(), reverse=True)]
    for java in candidates:
        found = java_major(java)
        if found is not None and found >= major:
            return java
    return None


def _dependency_xml(coordinate: str) -> str:
    group, name, version, *rest = coordinate.split(":")
    parts = [
        f"<groupId>{group}</groupId>",
        f"<artifactId>{name}</artifactId>",
        f"<version>{version}</version>",
    ]
    if rest:
        parts.append(f"<type>{rest[0]}</type>")
    if len(rest) > 1:
        parts.append(f"<classifier>{rest[1]}</classifier>")
    return f"    <dependency>{''.join(parts)}</dependency>"


def _mvn(arguments: list[str], *, cwd: Path, what: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenError(f"cannot fetch {what}: no `mvn` on PATH (install Maven 3.8+)")
    done = subprocess.run(
        [mvn, "-B", "-q", "-Dstyle.color=never", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise MavenError(f"mvn could not fetch {what} (exit {done.returncode}):\n{tail}")


def _install(partial: Path, target: Path) -> None:
    """Move a finished fetch into place; a concurrent fetch of the same thing may win."""
    target.parent.mkdir(parents=True, exist_ok=True)
    (partial / _DONE).write_text("")
    try:
        partial.rename(target)
    except OSError:
        # another process installed it first (or a stale, unfinished copy is there)
        if not (target / _DONE).exists():
            shutil.rmtree(target, ignore_errors=True)
            shutil.move(str(partial), str(target))


def stop_java(process: subprocess.Popen[bytes]) -> None:
    """Stop a component's JVM: SIGTERM, then SIGKILL if it is still up after 30 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
