"""Forms of the bots app: thin, every check of an upload comes from sandbox.package."""

from __future__ import annotations

from django import forms

from sandbox.limits import DEFAULT_UPLOAD_LIMITS, describe_bytes

from .models import Bot

#: read at most this much of an upload: one byte past the largest allowed bot is enough to refuse it
UPLOAD_READ_CAP = max(DEFAULT_UPLOAD_LIMITS.py_bytes, DEFAULT_UPLOAD_LIMITS.zip_bytes) + 1


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
    file = forms.FileField(
        label="Bot file",
        help_text=(
            f"One .py file (at most {describe_bytes(DEFAULT_UPLOAD_LIMITS.py_bytes)}) or a .zip with "
            f"main.py at its root (at most {describe_bytes(DEFAULT_UPLOAD_LIMITS.zip_bytes)}) "
            "that defines agent(observation, configuration)."
        ),
        allow_empty_file=True,
    )

    def upload(self) -> tuple[str, bytes]:
        """The upload's name and bytes, read with a cap so a huge upload is never held whole."""
        upload = self.cleaned_data["file"]
        return upload.name, read_capped(upload, UPLOAD_READ_CAP)


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
