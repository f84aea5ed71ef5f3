"""The assessment web app (optional extra ``irsample[assess]``): judge a design's documents in
a browser, several assessors at once, judgments stored in SQLite, exported for ``irsample merge``;
an organiser's dashboard with live estimates and rounds planned from the judgments so far.

Modules: :mod:`.documents` and :mod:`.topics` read what is shown; :mod:`.schema`,
:mod:`.store`, :mod:`.ops` and :mod:`.writer` keep the judgments (SQLite, WAL, append-only,
group commit); :mod:`.assign` hands documents out under binding leases; :mod:`.readout` and
:mod:`.export` read them back; :mod:`.order` chooses the next document (the design's order or
an adaptive method's); :mod:`.agreement` computes Cohen's kappa and Krippendorff's alpha with
intervals; :mod:`.dashboard`, :mod:`.estimates` and :mod:`.rounds` are the organiser's view,
live estimates and next rounds; :mod:`.lock` keeps one server per database; :mod:`.app`,
:mod:`.admin`, :mod:`.web` and :mod:`.pages` are the web server. Nothing else in irsample
imports this package.
"""

#: judging orders (see :mod:`.order`); here so that the command line lists them without
#: importing the design layer
STATIC_ORDERS = ("design", "topic")
ADAPTIVE_ORDERS = ("mtf", "mtf-global", "hedge")
ORDERS = STATIC_ORDERS + ADAPTIVE_ORDERS
