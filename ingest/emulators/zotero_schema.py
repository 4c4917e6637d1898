"""The part of the Zotero data schema the emulator enforces: item types, their fields
and creator types, with English labels.

It covers the types a reading list meets (articles, preprints, papers, reports, books,
web pages, software) and the types of the recorded public library in
``../shared/fixtures/zotero``. A write with another type, or with a field its type
lacks, fails the way the Zotero API fails it: a ``400`` entry in ``failed``.
"""

from __future__ import annotations

__all__ = ["COMMON_KEYS", "CREATOR_TYPES", "FIELD_LABELS", "ITEM_FIELDS", "ITEM_TYPE_LABELS", "SCHEMA_VERSION"]

#: Reported in the ``Zotero-Schema-Version`` header.
SCHEMA_VERSION = 29

_ARCHIVE = ("archive", "archiveLocation", "libraryCatalog", "callNumber", "rights", "extra")

#: Item type → its fields, in the order the Zotero client shows them.
ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "journalArticle": ("title", "abstractNote", "publicationTitle", "volume", "issue", "pages", "date",
                       "series", "seriesTitle", "seriesText", "journalAbbreviation", "language", "DOI",
                       "ISSN", "shortTitle", "url", "accessDate", *_ARCHIVE),
    "conferencePaper": ("title", "abstractNote", "date", "proceedingsTitle", "conferenceName", "place",
                        "publisher", "volume", "pages", "series", "language", "DOI", "ISBN", "shortTitle",
                        "url", "accessDate", *_ARCHIVE),
    "preprint": ("title", "abstractNote", "genre", "repository", "archiveID", "place", "date", "series",
                 "seriesNumber", "DOI", "citationKey", "url", "accessDate", "shortTitle", "language",
                 *_ARCHIVE),
    "report": ("title", "abstractNote", "reportNumber", "reportType", "seriesTitle", "place", "institution",
               "date", "pages", "language", "shortTitle", "url", "accessDate", *_ARCHIVE),
    "thesis": ("title", "abstractNote", "thesisType", "university", "place", "date", "numPages", "language",
               "shortTitle", "url", "accessDate", *_ARCHIVE),
    "book": ("title", "abstractNote", "series", "seriesNumber", "volume", "numberOfVolumes", "edition",
             "place", "publisher", "date", "numPages", "language", "ISBN", "shortTitle", "url", "accessDate",
             *_ARCHIVE),
    "bookSection": ("title", "abstractNote", "bookTitle", "series", "seriesNumber", "volume",
                    "numberOfVolumes", "edition", "place", "publisher", "date", "pages", "language", "ISBN",
                    "shortTitle", "url", "accessDate", *_ARCHIVE),
    "manuscript": ("title", "abstractNote", "manuscriptType", "place", "date", "numPages", "language",
                   "shortTitle", "url", "accessDate", *_ARCHIVE),
    "document": ("title", "abstractNote", "publisher", "date", "language", "shortTitle", "url", "accessDate",
                 *_ARCHIVE),
    "webpage": ("title", "abstractNote", "websiteTitle", "websiteType", "date", "shortTitle", "url",
                "accessDate", "language", "rights", "extra"),
    "blogPost": ("title", "abstractNote", "blogTitle", "websiteType", "date", "url", "accessDate", "language",
                 "shortTitle", "rights", "extra"),
    "computerProgram": ("title", "abstractNote", "seriesTitle", "versionNumber", "date", "system", "place",
                        "company", "programmingLanguage", "ISBN", "shortTitle", "url", "accessDate",
                        *_ARCHIVE),
    "film": ("title", "abstractNote", "distributor", "date", "genre", "videoRecordingFormat", "runningTime",
             "language", "shortTitle", "url", "accessDate", *_ARCHIVE),
    "artwork": ("title", "abstractNote", "artworkMedium", "artworkSize", "date", "language", "shortTitle",
                "url", "accessDate", *_ARCHIVE),
    "note": ("note",),
    "attachment": ("title", "accessDate", "url", "note", "contentType", "charset", "filename", "md5", "mtime",
                   "linkMode", "path"),
}

#: Keys every item may carry besides its type's fields.
COMMON_KEYS = frozenset({"key", "version", "itemType", "creators", "tags", "collections", "relations",
                         "deleted", "dateAdded", "dateModified", "parentItem", "inPublications"})

ITEM_TYPE_LABELS: dict[str, str] = {
    "journalArticle": "Journal Article", "conferencePaper": "Conference Paper", "preprint": "Preprint",
    "report": "Report", "thesis": "Thesis", "book": "Book", "bookSection": "Book Section",
    "manuscript": "Manuscript", "document": "Document", "webpage": "Web Page", "blogPost": "Blog Post",
    "computerProgram": "Software", "film": "Film", "artwork": "Artwork", "note": "Note",
    "attachment": "Attachment",
}

#: Item type → the creator types it accepts (the first is the primary one).
CREATOR_TYPES: dict[str, tuple[str, ...]] = {
    "journalArticle": ("author", "contributor", "editor", "translator", "reviewedAuthor"),
    "conferencePaper": ("author", "contributor", "editor", "seriesEditor", "translator"),
    "preprint": ("author", "contributor", "editor", "translator", "reviewedAuthor"),
    "report": ("author", "contributor", "seriesEditor", "translator"),
    "thesis": ("author", "contributor"),
    "book": ("author", "contributor", "editor", "seriesEditor", "translator"),
    "bookSection": ("author", "bookAuthor", "contributor", "editor", "seriesEditor", "translator"),
    "manuscript": ("author", "contributor", "translator"),
    "document": ("author", "contributor", "editor", "reviewedAuthor", "translator"),
    "webpage": ("author", "contributor", "translator"),
    "blogPost": ("author", "commenter", "contributor"),
    "computerProgram": ("programmer", "contributor"),
    "film": ("director", "contributor", "producer", "scriptwriter"),
    "artwork": ("artist", "contributor"),
}

FIELD_LABELS: dict[str, str] = {
    "title": "Title", "abstractNote": "Abstract", "publicationTitle": "Publication", "volume": "Volume",
    "issue": "Issue", "pages": "Pages", "date": "Date", "series": "Series", "seriesTitle": "Series Title",
    "seriesText": "Series Text", "journalAbbreviation": "Journal Abbr", "language": "Language", "DOI": "DOI",
    "ISSN": "ISSN", "ISBN": "ISBN", "shortTitle": "Short Title", "url": "URL", "accessDate": "Accessed",
    "archive": "Archive", "archiveLocation": "Loc. in Archive", "libraryCatalog": "Library Catalog",
    "callNumber": "Call Number", "rights": "Rights", "extra": "Extra", "proceedingsTitle": "Proceedings Title",
    "conferenceName": "Conference Name", "place": "Place", "publisher": "Publisher", "genre": "Genre",
    "repository": "Repository", "archiveID": "Archive ID", "seriesNumber": "Series Number",
    "citationKey": "Citation Key", "reportNumber": "Report Number", "reportType": "Report Type",
    "institution": "Institution", "thesisType": "Type", "university": "University", "numPages": "# of Pages",
    "numberOfVolumes": "# of Volumes", "edition": "Edition", "bookTitle": "Book Title",
    "manuscriptType": "Type", "websiteTitle": "Website Title", "websiteType": "Website Type",
    "blogTitle": "Blog Title", "versionNumber": "Version", "system": "System", "company": "Company",
    "programmingLanguage": "Prog. Language", "distributor": "Distributor",
    "videoRecordingFormat": "Format", "runningTime": "Running Time", "artworkMedium": "Medium",
    "artworkSize": "Artwork Size",
}
