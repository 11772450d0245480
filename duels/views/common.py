"""Helpers shared by the page views."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from functools import wraps

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.handlers.asgi import ASGIRequest
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse

PAGE_SIZE = 25
DOWNLOAD_CHUNK_CHARS = 256 * 1024
STAFF_PAGE = "Only staff may open this page."


def staff_required(view: Callable) -> Callable:
    """Sign-in first (the sign-in page for visitors), then the app's 403 page for a signed-in
    user who is not staff (never the admin's own sign-in form, which reads as a wrong password)."""
    @wraps(view)
    def checked(request: HttpRequest, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied(STAFF_PAGE)
        return view(request, *args, **kwargs)

    return login_required(checked)


def paginate(request: HttpRequest, items: QuerySet | list, *, per_page: int = PAGE_SIZE) -> Page:
    """The page named by `?page=` (first page for a bad number, last for one past the end)."""
    return Paginator(items, per_page).get_page(request.GET.get("page"))


def cancel_confirmed(request: HttpRequest) -> bool:
    """True for the POST of the confirmation page (`confirm=yes`); anything else asks first."""
    return request.method == "POST" and request.POST.get("confirm") == "yes"


def streaming_download(request: HttpRequest, pieces: Iterable[str], *, content_type: str,
                       filename: str) -> StreamingHttpResponse:
    """An attachment sent a chunk at a time, however long: never held whole by the server.

    Under ASGI the pieces are read through the thread that runs the site's synchronous code,
    one chunk per hop (Django would otherwise read a synchronous iterator to its end before
    sending its first byte); under WSGI they are read as the server sends them.
    """
    chunks = _gathered(iter(pieces))
    if isinstance(request, ASGIRequest):
        body: Iterator[bytes] | AsyncIterator[bytes] = _pulled(chunks)
    else:
        body = chunks
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _gathered(pieces: Iterator[str]) -> Iterator[bytes]:
    """The pieces joined into chunks of about DOWNLOAD_CHUNK_CHARS, encoded."""
    buffer: list[str] = []
    size = 0
    for piece in pieces:
        buffer.append(piece)
        size += len(piece)
        if size >= DOWNLOAD_CHUNK_CHARS:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()


def streaming_file_download(request: HttpRequest, handle, *, content_type: str,
                            filename: str) -> StreamingHttpResponse:
    """An open binary file sent as an attachment a chunk at a time (closed when sent)."""
    def chunks() -> Iterator[bytes]:
        with handle:
            while chunk := handle.read(DOWNLOAD_CHUNK_CHARS):
                yield chunk

    body = _pulled(chunks()) if isinstance(request, ASGIRequest) else chunks()
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


async def _pulled(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    pull = sync_to_async(next, thread_sensitive=True)
    while (chunk := await pull(chunks, None)) is not None:
        yield chunk
