"""Compiling `agent/channels/*.py`: custom channels, and `channels/eve.py` replacing the default one."""

from __future__ import annotations

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.channels import Channel, EveChannel, may_match_eve
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compose_tools import source_info
from eve_runtime.project.definitions import Found, find_definition
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import ChannelManifest, ChannelRouteManifest
from eve_runtime.project.sources import AgentSources

__all__ = ["CompiledChannels", "compile_channels"]

EVE = "eve"


class CompiledChannels:
    """The channels of the root agent."""

    def __init__(self) -> None:
        self.channels: dict[str, Channel] = {}
        self.eve: EveChannel | None = None
        self.manifests: list[ChannelManifest] = []


def compile_channels(sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]) -> CompiledChannels:
    """Load every channel; two routes answering the same method and path are an error.

    A route whose pattern could match a path under `/eve/` is a warning: such requests go to eve.
    """
    node_id = sources.node_id
    compiled = CompiledChannels()
    owners: dict[tuple[str, str], str] = {}
    for named in sources.channels:
        is_eve = named.name == EVE
        module = loader.load_into(named.source.path, diagnostics, node_id=node_id)
        if module is None:
            continue
        found = find_definition(
            module,
            (EveChannel,) if is_eve else (Channel,),
            path=named.source.path,
            node_id=node_id,
            preferred="channel",
            what="eve channel replacement" if is_eve else "channel",
            example=(
                "channel = eve_channel(auth=[local_dev(), bearer_token()])  # or disable_channel()"
                if is_eve
                else 'channel = define_channel(routes=[POST("/webhook", receive)])'
            ),
        )
        if not isinstance(found, Found):
            diagnostics.append(found)
            continue
        source = source_info(node_id, named, export=found.name)
        if isinstance(found.value, EveChannel):
            compiled.eve = found.value
            compiled.manifests.append(
                ChannelManifest(
                    name=EVE,
                    kind="disabled" if found.value.disabled else "eve",
                    has_auth=bool(found.value.auth),
                    source=source,
                )
            )
            continue
        channel: Channel = found.value
        collided = False
        for route in channel.routes:
            key = (route.method, route.path)
            if key in owners:
                diagnostics.append(
                    dg.error(
                        "compile/channel-route-collision",
                        f"Channels {owners[key]!r} and {named.name!r} both answer {route.method} "
                        f"{route.display_path}; give each route its own method and path.",
                        named.source.path,
                        node_id=node_id,
                    )
                )
                collided = True
            owners.setdefault(key, named.name)
            if may_match_eve(route.path):
                diagnostics.append(
                    dg.warning(
                        "compile/channel-route-shadows-eve",
                        f"Channel {named.name!r}: {route.method} {route.display_path} could match paths under "
                        "/eve/, which always go to eve's own routes; start the route with a fixed segment.",
                        named.source.path,
                        node_id=node_id,
                    )
                )
        if collided:
            continue
        compiled.channels[named.name] = channel
        compiled.manifests.append(
            ChannelManifest(
                name=named.name,
                kind="custom",
                routes=[ChannelRouteManifest(method=r.method, path=r.display_path) for r in channel.routes],
                event_names=sorted(channel.events),
                turn_policy=channel.turn_policy,
                has_auth=channel.auth is not None,
                source=source,
            )
        )
    return compiled
