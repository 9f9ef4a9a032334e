"""Calls to webhooks (admission and conversion): an HTTPS POST of a review to the
configuration's `clientConfig.url`, verifying the server against its `caBundle`.

`clientConfig.service` (a Service in the cluster) is not supported: the emulator runs no
Services, so such a call fails as an unreachable webhook would.
"""
import asyncio
import json

import aiohttp

from .tls import client_context


class HookError(Exception):
    """A webhook that could not be called, or answered something unusable."""


async def post(client_config: dict, body: dict, timeout_seconds: float) -> dict:
    url = client_config.get('url')
    if not url:
        raise HookError('the emulator cannot call clientConfig.service (it runs no Services); use clientConfig.url')
    if not url.startswith('https://'):
        raise HookError(f'Post "{url}": the webhook must be served over HTTPS')
    timeout = int(timeout_seconds)
    target = f'{url}{"&" if "?" in url else "?"}timeout={timeout}s'
    try:
        ssl = client_context(client_config.get('caBundle'))
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_seconds)) as session:
            async with session.post(target, data=json.dumps(body), ssl=ssl,
                                    headers={'Content-Type': 'application/json',
                                             'Accept': 'application/json'}) as resp:
                text = await resp.text()
                if resp.status != 200:
                    raise HookError(f'Post "{target}": the server responded with {resp.status}: {text[:200]}')
                return json.loads(text)
    except HookError:
        raise
    except asyncio.TimeoutError:
        raise HookError(f'Post "{target}": context deadline exceeded') from None
    except (aiohttp.ClientError, OSError, ValueError) as e:
        raise HookError(f'Post "{target}": {e}') from None
