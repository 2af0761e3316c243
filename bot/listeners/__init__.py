"""Bolt listeners, one package per kind of request, each exposing `register(app)`.

Listeners are thin: they read what they need by parameter name, acknowledge, and submit the reply to the
pool (`replies` is put into every request's context by `bot.app`). The work itself is in `bot.replies`, one
module per surface (`replies.mentions`, `replies.buttons`, ...).
"""
