"""JSON over HTTP for the Python parts of the scripts (run from the repository's root):

    sys.path.insert(0, "scripts")
    from http_json import call
"""
import json
import urllib.error
import urllib.request


def call(url, method, path, body=None, token=None, timeout=30):
    """Sends METHOD to url + path with BODY as JSON (no body when None) and TOKEN, if any, as
    `Authorization: Bearer TOKEN`. Returns (status, the answer's JSON, or None when the answer
    is empty) for error statuses too; an error answer that is not JSON reads as None."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read() or b"null")
        except ValueError:
            return error.code, None
