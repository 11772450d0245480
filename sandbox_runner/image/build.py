"""Build the sandbox image: from the Dockerfile, or offline from a cached Debian rootfs."""

from __future__ import annotations

import hashlib
import io
import logging
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from sandbox_runner.errors import SandboxUnavailable
from sandbox_runner.guest import GUEST_PATH, GUEST_PATH_IN_IMAGE, guest_hash, guest_source

logger = logging.getLogger(__name__)

SUITE = "bookworm"
PACKAGES = ("python3",)
HASH_LABEL = "envduels.guest_hash"
RECIPE_LABEL = "envduels.recipe"
SANDBOX_DIR = Path(__file__).resolve().parent.parent
SLIM_PATHS = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
              "usr/share/locale", "usr/share/info")
IMAGE_CHANGES = (
    "USER 65534:65534",
    "WORKDIR /tmp",
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    f'CMD ["python3", "-S", "-I", "{GUEST_PATH_IN_IMAGE}", '
    '"268435456", "0", "16777216", "0", "65536", "1"]',
)


def debian_mirror(apt_dir: Path = Path("/etc/apt")) -> str:
    """Return the first non-security Debian mirror URL configured for apt on this machine."""
    candidates: list[str] = []
    list_files = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in list_files:
        if path.is_file():
            for line in path.read_text().splitlines():
                match = re.match(r"\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)", line)
                if match:
                    candidates.append(match.group(1))
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, flags=re.MULTILINE))
            if "deb" in fields.get("Types", "").split():
                candidates.extend(fields.get("URIs", "").split())
    for url in candidates:
        if "security" not in url and url.startswith(("http://", "https://", "file:")):
            return url.rstrip("/")
    raise SandboxUnavailable(
        "no Debian mirror found in /etc/apt; configure apt or build from the Dockerfile"
    )


def recipe_hash(mirror: str) -> str:
    """Return a hash of what goes into the rootfs, so a changed recipe rebuilds the cache."""
    recipe = f"{SUITE}|minbase|{','.join(PACKAGES)}|{mirror}|{','.join(SLIM_PATHS)}"
    return hashlib.sha256(recipe.encode()).hexdigest()[:12]


def cached_rootfs(cache_dir: Path, mirror: str, log: Callable[[str], None]) -> Path:
    """Return a tarball of a minimal Debian rootfs with python3, running debootstrap if needed."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    tarball = cache_dir / f"rootfs-{SUITE}-{recipe_hash(mirror)}.tar"
    if tarball.exists():
        log(f"using cached rootfs {tarball}")
        return tarball
    if not shutil.which("debootstrap"):
        raise SandboxUnavailable("debootstrap is not installed (apt-get install debootstrap)")
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix="rootfs-") as work:
        rootfs = Path(work) / "rootfs"
        command = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                   SUITE, str(rootfs), mirror]
        log("running " + " ".join(command))
        completed = subprocess.run(command, capture_output=True, text=True)
        if completed.returncode != 0:
            raise SandboxUnavailable("debootstrap failed:\n" + completed.stdout[-3000:]
                                     + completed.stderr[-3000:])
        for relative in SLIM_PATHS:
            target = rootfs / relative
            if target.is_dir():
                shutil.rmtree(target)
                target.mkdir()
        partial = tarball.with_suffix(".partial")
        with tarfile.open(partial, "w") as archive:
            archive.add(rootfs, arcname=".")
        partial.rename(tarball)
    log(f"cached rootfs at {tarball}")
    return tarball


def add_guest(rootfs_tar: Path, output: Path) -> None:
    """Write `output`: the rootfs tarball plus the guest program at its image path."""
    shutil.copyfile(rootfs_tar, output)
    data = guest_source().encode()
    with tarfile.open(output, "a") as archive:
        info = tarfile.TarInfo("." + GUEST_PATH_IN_IMAGE)
        info.size = len(data)
        info.mode = 0o444
        archive.addfile(info, io.BytesIO(data))


def existing_label(client, tag: str, label: str) -> str | None:
    import docker.errors

    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    return (image.labels or {}).get(label)


def build_image(*, tag: str, offline: bool, force: bool = False,
                cache_dir: Path | None = None, log: Callable[[str], None] = logger.info) -> bool:
    """Build the sandbox image as `tag`; return False when an up-to-date image already exists."""
    import docker

    client = docker.from_env()
    wanted = guest_hash()
    if not force and existing_label(client, tag, HASH_LABEL) == wanted:
        log(f"{tag} is up to date (guest {wanted}); use --force to rebuild")
        return False
    if offline:
        mirror = debian_mirror()
        rootfs = cached_rootfs(cache_dir or default_cache_dir(), mirror, log)
        with tempfile.TemporaryDirectory(dir=rootfs.parent) as work:
            image_tar = Path(work) / "image.tar"
            add_guest(rootfs, image_tar)
            repository, _, version = tag.rpartition(":") if ":" in tag else (tag, "", "latest")
            changes = [*IMAGE_CHANGES, f"LABEL {HASH_LABEL}={wanted} {RECIPE_LABEL}="
                       f"{recipe_hash(mirror)}"]
            log(f"importing {tag}")
            client.api.import_image_from_file(str(image_tar), repository=repository,
                                              tag=version, changes=changes)
    else:
        log(f"building {tag} from {GUEST_PATH.parent.parent / 'image' / 'Dockerfile'}")
        client.images.build(path=str(SANDBOX_DIR), dockerfile="image/Dockerfile", tag=tag,
                            labels={HASH_LABEL: wanted}, rm=True)
    if existing_label(client, tag, HASH_LABEL) != wanted:
        raise SandboxUnavailable(f"built {tag} but it does not carry the guest label")
    log(f"built {tag} (guest {wanted})")
    return True


def default_cache_dir() -> Path:
    return SANDBOX_DIR.parent / "var" / "sandbox-image"
