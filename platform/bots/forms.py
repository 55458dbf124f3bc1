"""Forms of the bots app: thin, every check of an upload comes from sandbox.package."""

from __future__ import annotations

import io

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler

from sandbox.limits import describe_bytes

from .models import Bot


def upload_read_cap() -> int:
    """Read at most this much of an upload: one byte past the largest allowed bot is enough to refuse it."""
    limits = settings.BOT_UPLOAD_LIMITS
    return max(limits.py_bytes, limits.zip_bytes) + 1


class BotForm(forms.ModelForm):
    class Meta:
        model = Bot
        fields = ["name", "description", "source_public"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        labels = {"source_public": "Source is public"}


class BotEditForm(forms.ModelForm):
    class Meta:
        model = Bot
        fields = ["description", "source_public"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        labels = {"source_public": "Source is public"}


class UploadForm(forms.Form):
    file = forms.FileField(label="Bot file", allow_empty_file=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limits = settings.BOT_UPLOAD_LIMITS
        self.fields["file"].help_text = (
            f"One .py file (at most {describe_bytes(limits.py_bytes)}) or a .zip with "
            f"main.py at its root (at most {describe_bytes(limits.zip_bytes)}) "
            "that defines agent(observation, configuration)."
        )

    def upload(self) -> tuple[str, bytes]:
        """The upload's name and bytes, read with a cap so a huge upload is never held whole."""
        upload = self.cleaned_data["file"]
        return upload.name, read_capped(upload, upload_read_cap())


def read_capped(upload, cap: int) -> bytes:
    """At most ``cap`` bytes of an uploaded file, read in chunks."""
    parts: list[bytes] = []
    total = 0
    for chunk in upload.chunks(64 * 1024):
        parts.append(chunk[: cap - total])
        total += len(parts[-1])
        if total >= cap:
            break
    return b"".join(parts)


class CappedUploadHandler(FileUploadHandler):
    """Keeps at most ``cap`` bytes of each uploaded file in memory; the rest is read and dropped.

    An upload larger than any allowed bot is never held whole, in memory or on
    disk; the kept prefix is still over the limit, so the checks refuse it.
    """

    def __init__(self, request=None, cap: int | None = None):
        super().__init__(request)
        self.cap = upload_read_cap() if cap is None else cap

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.buffer = io.BytesIO()
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        room = self.cap - self.buffer.tell()
        if room > 0:
            self.buffer.write(raw_data[:room])
        return None  # nothing for later handlers: this one keeps what is needed

    def file_complete(self, file_size):
        self.buffer.seek(0)
        return InMemoryUploadedFile(
            self.buffer, self.field_name, self.file_name, self.content_type,
            self.buffer.getbuffer().nbytes, self.charset, self.content_type_extra,
        )
