"""Files and images of a user message as litellm content parts (`models.openai_format.content_part`)."""

from __future__ import annotations

import base64

from eve_runtime.messages import Attachment, UserMessage
from eve_runtime.models.openai_format import MAX_IMAGE_BYTES, content_part, to_openai_messages

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def test_a_user_message_with_attachments_becomes_content_parts() -> None:
    message = UserMessage(
        content="look",
        attachments=(
            Attachment(media_type="image/png", size=8, data=PNG),
            Attachment(media_type="application/pdf", filename="a.pdf", size=3, data="JVBE"),
            Attachment(media_type="text/csv", filename="t.csv", size=8, data=base64.b64encode(b"a,b\n1,2\n").decode()),
            Attachment(media_type="application/zip", filename="z.zip", size=3, data="UEsD"),
        ),
    )
    assert to_openai_messages([message]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"}},
                {"type": "text", "text": "Contents of t.csv (text/csv):\na,b\n1,2\n"},
                # a zip is no content part any provider reads: the message's `Attached file` line names it
            ],
        }
    ]


def test_urls_are_handed_to_the_provider() -> None:
    image = Attachment(media_type="image/jpeg", url="https://example.com/a.jpg")
    pdf = Attachment(media_type="application/pdf", url="https://example.com/a.pdf")
    assert content_part(image) == {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}}
    assert content_part(pdf) == {
        "type": "file",
        "file": {"file_id": "https://example.com/a.pdf", "format": "application/pdf"},
    }


def test_what_providers_refuse_is_left_to_the_reference_line() -> None:
    assert content_part(Attachment(media_type="image/png", size=MAX_IMAGE_BYTES + 1, data=PNG)) is None
    assert (
        content_part(Attachment(media_type="text/plain", size=2, data=base64.b64encode(b"\xff\xfe").decode())) is None
    )
    assert to_openai_messages([UserMessage(content="plain")]) == [{"role": "user", "content": "plain"}]
