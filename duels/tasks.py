"""Background tasks (Django Tasks API, database backend; run by `manage.py db_worker`).

Tasks stay thin: they parse their arguments and call one service.
"""

from __future__ import annotations
