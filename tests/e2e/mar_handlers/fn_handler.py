"""A module-level handle(data, context): text in, text out (upper case, with the
model's name from the context)."""


def handle(data, context):
    if data is None:  # initialize call
        return None
    return ["%s:%s" % (context.model_name, (row.get("body") or b"").upper()) for row in data]
