"""The assessment web app (optional extra ``irsample[assess]``): judge a design's documents in
a browser, several assessors at once, judgments stored in SQLite, exported for ``irsample merge``.

Modules: :mod:`.documents` and :mod:`.topics` read what is shown; :mod:`.store` keeps the
judgments (SQLite, WAL, one commit per judgment); :mod:`.order` chooses the next document
(the design's order or an adaptive method's); :mod:`.agreement` computes Cohen's kappa and
Krippendorff's alpha with intervals; :mod:`.app` and :mod:`.pages` are the web server.
Nothing else in irsample imports this package.
"""

#: judging orders (see :mod:`.order`); here so that the command line lists them without
#: importing the design layer
STATIC_ORDERS = ("design", "topic")
ADAPTIVE_ORDERS = ("mtf", "mtf-global", "hedge")
ORDERS = STATIC_ORDERS + ADAPTIVE_ORDERS
