"""An MCP result's content blocks as our result: images as images, the rest described."""

from __future__ import annotations

import base64

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from agent_cli.tools.mcp_content import resource_result, to_result
from tests.support.images import png

PNG = base64.b64encode(png(5, 4)).decode()
NOT_AN_IMAGE = base64.b64encode(b"\x89PNG" + bytes(60)).decode()


def test_an_image_is_carried_as_an_image_and_the_text_says_so():
    result = to_result(
        CallToolResult(
            content=[
                TextContent(type="text", text="look"),
                ImageContent(type="image", data=PNG, mime_type="image/png"),
                ImageContent(type="image", data=NOT_AN_IMAGE, mime_type="image/png"),
                AudioContent(type="audio", data=NOT_AN_IMAGE, mime_type="audio/wav"),
            ]
        )
    )
    assert [(i.media_type, i.width, i.height) for i in result.images] == [("image/png", 5, 4)]
    assert result.text.splitlines() == [
        "look",
        "[image: image/png 5×4, shown beside this]",
        "[image: image/png, 66 bytes]",  # not one a model takes: described
        "[audio: audio/wav, 66 bytes]",
    ]


def test_an_embedded_image_resource_is_an_image_too():
    blob = BlobResourceContents(uri="file:///p.png", mime_type="image/png", blob=PNG)
    result = to_result(CallToolResult(content=[EmbeddedResource(type="resource", resource=blob)]))
    assert len(result.images) == 1
    assert result.text == "[resource file:///p.png (image/png): an image 5×4, shown]"


def test_structured_content_is_kept_unless_a_text_part_already_says_it():
    said = CallToolResult(
        content=[TextContent(type="text", text='{"a": 1}')], structured_content={"a": 1}
    )
    assert to_result(said).text == '{"a": 1}'
    other = CallToolResult(
        content=[TextContent(type="text", text="done")], structured_content={"a": 1}
    )
    assert to_result(other).text == 'done\n[structured content]\n{\n "a": 1\n}'
    wrapped = CallToolResult(  # how the SDK sends a tool's plain return value
        content=[TextContent(type="text", text="7")], structured_content={"result": 7}
    )
    assert to_result(wrapped).text == "7"
    text = CallToolResult(
        content=[TextContent(type="text", text="hi")], structured_content={"result": "hi"}
    )
    assert to_result(text).text == "hi"
    alone = CallToolResult(content=[], structured_content={"a": 1})
    assert to_result(alone).text == '{\n "a": 1\n}'


def test_a_resource_read_is_its_text_or_its_image():
    text = TextResourceContents(uri="note://a", mime_type="text/plain", text="hello")
    blob = BlobResourceContents(uri="pic://b", mime_type="image/png", blob=PNG)
    result = resource_result("note://a", [text, blob])
    assert result.text.splitlines() == [
        "[resource note://a (text/plain)]",
        "hello",
        "[resource pic://b (image/png): an image 5×4, shown]",
    ]
    assert len(result.images) == 1
    assert resource_result("x://y", []).text == "(the resource x://y is empty)"
