"""Static files storage: collected, hashed and compressed files, or the plain names without them."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage that still serves pages before `collectstatic`.

    With `collectstatic` run, pages name the content-hashed copies in STATIC_ROOT (cached for ten
    years). A file that was never collected (a web machine started with `migrate` and Daphne
    only, or a file added since the last collect) keeps its plain name, which WhiteNoise serves
    from the app and project static folders (WHITENOISE_USE_FINDERS) with a short cache lifetime.
    Django's own `manifest_strict = False` does not do this: it hashes the file from STATIC_ROOT
    and raises when the file was never collected there.
    """

    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            if self.hashed_files.get(self.hash_key(self.clean_name(name))) is not None:
                raise
            return name
