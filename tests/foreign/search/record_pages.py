"""The small web the hand-written search sessions browse: pages (Markdown), their engine titles and dates.

Every page is written by hand for these fixtures (short paraphrases of well-known facts, no text copied
from the sites named). ``engine_title`` is what a search engine lists for the page, ``title`` the page's own
heading; ``date`` is the engine's published date for it, as the engine writes it (None: it shows none).
"""

from __future__ import annotations

PAGES: dict[str, dict] = {}


def page(key: str, url: str, title: str, engine_title: str, date: str | None, body: str) -> None:
    PAGES[key] = {
        "url": url,
        "title": title,
        "engine_title": engine_title,
        "date": date,
        "body": body.strip(),
    }


page(
    "eiffel",
    "https://en.wikipedia.org/wiki/Eiffel_Tower",
    "Eiffel Tower",
    "Eiffel Tower - Wikipedia",
    "2024-11-02",
    """
The **Eiffel Tower** is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after
the engineer Gustave Eiffel, whose company designed and built the tower for the 1889 World's Fair.

## History

Construction began in January 1887 and the tower was completed in March 1889, in time for the
[Exposition Universelle](https://en.wikipedia.org/wiki/Exposition_Universelle_(1889)). The structural
design is credited to Maurice Koechlin and Émile Nouguier, with the architect Stephen Sauvestre shaping its
appearance.

## Height

The tower was the tallest man-made structure in the world until the Chrysler Building was finished in 1930.
With its broadcast antennas the tower now stands 330 metres tall, after a new antenna was added in 2022.

## Visitors

The tower has three levels open to visitors. Tickets can be bought to ascend by stairs or lift to the first
and second levels.
""",
)

page(
    "eiffel_official",
    "https://www.toureiffel.paris/en/the-monument/key-figures",
    "Key figures",
    "Eiffel Tower key figures | Official website",
    "Mar 3, 2024",
    """
Some numbers about the monument, updated each year by the operator.

- Height: 330 m (with antennas)
- Weight of the iron structure: 7,300 tonnes
- Number of iron parts: 18,038
- Number of rivets: 2,500,000

The tower is repainted every seven years, which takes about 60 tonnes of paint.
""",
)

page(
    "py312",
    "https://docs.python.org/3/whatsnew/3.12.html",
    "What's New In Python 3.12",
    "What's New In Python 3.12 — Python 3.13 documentation",
    None,
    """
This article explains the new features in Python 3.12, compared to 3.11. Python 3.12 was released on
October 2, 2023.

## Summary – Release highlights

Python 3.12 is a stable release of the Python programming language, with a mix of changes to the language
and the standard library. The library changes focus on cleaning up deprecated APIs, usability, and
correctness.

- PEP 695: a new type parameter syntax for generic classes and functions, and the `type` statement.
- PEP 701: f-strings may now contain any valid Python expression, including nested quotes.
- PEP 684: a unique per-interpreter GIL.

## Improved error messages

Modules from the standard library are now potentially suggested as part of the error messages displayed by
the interpreter when a NameError is raised to the top level.
""",
)

page(
    "py313",
    "https://docs.python.org/3/whatsnew/3.13.html",
    "What's New In Python 3.13",
    "What's New In Python 3.13 — Python 3.13 documentation",
    None,
    """
This article explains the new features in Python 3.13, compared to 3.12. Python 3.13 was released on
October 7, 2024.

## Summary – Release highlights

Python 3.13 ships a new interactive interpreter with multi-line editing and colour, an experimental
free-threaded build mode (PEP 703) that runs without the global interpreter lock, and a preliminary
just-in-time compiler (PEP 744).

- The free-threaded build is available as a separate executable, usually named `python3.13t`.
- The JIT is disabled by default and can be enabled when building CPython.
""",
)

page(
    "pep695",
    "https://peps.python.org/pep-0695/",
    "PEP 695 – Type Parameter Syntax",
    "PEP 695 – Type Parameter Syntax | peps.python.org",
    "2022-06-15",
    """
Author: Eric Traut. Status: Final. Python-Version: 3.12.

## Abstract

This PEP specifies an improved syntax for specifying type parameters within a generic class, function, or
type alias. It also introduces a new statement for declaring type aliases.

## Motivation

Type parameters were previously declared with `TypeVar` objects at module level, which was verbose and
confused many users about their scoping rules.
""",
)

page(
    "kilimanjaro",
    "https://en.wikipedia.org/wiki/Mount_Kilimanjaro",
    "Mount Kilimanjaro",
    "Mount Kilimanjaro - Wikipedia",
    "2024-08-19",
    """
**Mount Kilimanjaro** is a dormant volcano in Tanzania. It has three volcanic cones: Kibo, Mawenzi, and
Shira. It is the highest mountain in Africa and the highest single free-standing mountain above sea level in
the world, at 5,895 metres above sea level.

## Summit

The highest point, Uhuru Peak, lies on the crater rim of Kibo. The first recorded ascent to the summit was
by Hans Meyer and Ludwig Purtscheller in 1889.

## Climbing

Several routes lead to the summit; the Marangu route is the oldest and is sometimes called the Coca-Cola
route. Most climbers need five to eight days for the round trip.
""",
)

page(
    "sound",
    "https://en.wikipedia.org/wiki/Speed_of_sound",
    "Speed of sound",
    "Speed of sound - Wikipedia",
    "2024-10-28",
    """
The **speed of sound** is the distance travelled per unit of time by a sound wave as it propagates through
an elastic medium. At 20 °C (68 °F), the speed of sound in dry air is about 343 metres per second.

## Dependence on temperature

In an ideal gas the speed of sound depends only on the temperature, not on the pressure. It increases by
roughly 0.6 metres per second for every degree Celsius of warming.

## Other media

Sound travels faster in liquids and solids: about 1,480 metres per second in water and about 5,960 metres
per second in steel.
""",
)

page(
    "c14",
    "https://en.wikipedia.org/wiki/Carbon-14",
    "Carbon-14",
    "Carbon-14 - Wikipedia",
    "2024-07-30",
    """
**Carbon-14** is a radioactive isotope of carbon with an atomic nucleus containing 6 protons and 8 neutrons.
Its presence in organic matter is the basis of the radiocarbon dating method.

## Half-life

Carbon-14 has a half-life of 5,730 ± 40 years, a value known as the Cambridge half-life. The earlier Libby
half-life of 5,568 years is still used by convention when radiocarbon ages are reported.

## Production

Carbon-14 is produced in the upper atmosphere when neutrons from cosmic rays are absorbed by nitrogen atoms.
""",
)

page(
    "sqlite_limits",
    "https://www.sqlite.org/limits.html",
    "Implementation Limits For SQLite",
    "Implementation Limits For SQLite",
    None,
    """
## Maximum Number Of Pages In A Database File

SQLite is able to limit the size of a database file to prevent the database file from growing too large.
The maximum page count is 4294967294 and the largest page size is 65536 bytes, so the maximum database size
is about 281 terabytes.

## Maximum Length Of A String Or BLOB

The maximum number of bytes in a string or BLOB in SQLite is defined by the preprocessor macro
`SQLITE_MAX_LENGTH`. The default value of this macro is 1 billion (1 thousand million or 1,000,000,000).

## Maximum Number Of Columns

The `SQLITE_MAX_COLUMN` compile-time parameter sets the maximum number of columns in a table, which defaults
to 2000.
""",
)

page(
    "amazon",
    "https://en.wikipedia.org/wiki/Amazon_River",
    "Amazon River",
    "Amazon River - Wikipedia",
    "2024-09-11",
    """
The **Amazon River** in South America is the largest river by discharge volume of water in the world, and
the disputed longest river system in the world in comparison to the Nile.

## Length

The length of the Amazon is usually given as about 6,400 kilometres, although estimates range from 6,275
to 6,992 kilometres depending on where the source is placed.

## Basin

The Amazon basin covers about 7 million square kilometres, roughly 40 percent of South America.
""",
)

page(
    "nile",
    "https://en.wikipedia.org/wiki/Nile",
    "Nile",
    "Nile - Wikipedia",
    "2024-10-02",
    """
The **Nile** is a major north-flowing river in northeastern Africa. It flows into the Mediterranean Sea.

## Length

The Nile has historically been considered the longest river in the world, at about 6,650 kilometres, though
this has been contested by research suggesting that the Amazon is slightly longer.
""",
)

page(
    "bulgakov",
    "https://en.wikipedia.org/wiki/The_Master_and_Margarita",
    "The Master and Margarita",
    "The Master and Margarita - Wikipedia",
    "2024-06-21",
    """
***The Master and Margarita*** is a novel by the Soviet writer Mikhail Bulgakov, written between 1928 and
1940 but unpublished in book form until 1967.

## Publication

A censored version appeared in the Moscow magazine in 1966 and 1967. The first complete edition was
published in Frankfurt in 1969.

## Plot

The story concerns a visit by the devil, appearing as a mysterious foreign professor named Woland, to the
officially atheistic Soviet Union.
""",
)

page(
    "nobel2019",
    "https://www.nobelprize.org/prizes/chemistry/2019/summary/",
    "The Nobel Prize in Chemistry 2019",
    "The Nobel Prize in Chemistry 2019 - NobelPrize.org",
    None,
    """
The Nobel Prize in Chemistry 2019 was awarded jointly to John B. Goodenough, M. Stanley Whittingham and Akira
Yoshino "for the development of lithium-ion batteries".

## Prize share

Each laureate received one third of the prize. At 97, John B. Goodenough became the oldest Nobel laureate
in history.
""",
)

page(
    "rust185",
    "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html",
    "Announcing Rust 1.85.0 and Rust 2024",
    "Announcing Rust 1.85.0 and Rust 2024 | Rust Blog",
    "Feb 20, 2025",
    """
The Rust team is happy to announce a new version of Rust, 1.85.0. This stabilizes the 2024 edition as well.

## Rust 2024

We are excited to announce that the Rust 2024 Edition is now stable. Editions are a mechanism for opt-in
changes that may otherwise pose a backwards compatibility risk.

## Async closures

Rust now supports asynchronous closures like `async || {}` which return futures when called.
""",
)

page(
    "rust_editions",
    "https://doc.rust-lang.org/edition-guide/editions/index.html",
    "What are editions?",
    "What are editions? - The Rust Edition Guide",
    None,
    """
The release of Rust 1.0 established "stability without stagnation" as a core Rust deliverable.

Editions allow Rust to make changes that would otherwise break existing code. There have been four editions
so far: Rust 2015, Rust 2018, Rust 2021 and Rust 2024.
""",
)

page(
    "boiling",
    "https://www.engineeringtoolbox.com/boiling-points-water-altitude-d_1344.html",
    "Water - Boiling Points at Higher Altitudes",
    "Water - Boiling Points at Higher Altitudes",
    "2023-05-14",
    """
The boiling point of water depends on the atmospheric pressure, which decreases with altitude.

## Rule of thumb

The boiling point drops by about 1 °C for every 300 metres of altitude gain.

| Altitude (m) | Boiling point (°C) |
|---|---|
| 0 | 100 |
| 1000 | 96.7 |
| 2000 | 93.4 |
| 3000 | 90.0 |

At 2,000 metres water boils at about 93 °C, which is why cooking times are longer in the mountains.
""",
)

page(
    "lakhta",
    "https://en.wikipedia.org/wiki/Lakhta_Center",
    "Lakhta Center",
    "Lakhta Center - Wikipedia",
    "2024-05-09",
    """
The **Lakhta Center** is an 87-storey skyscraper in Saint Petersburg, Russia. Standing 462 metres tall, it is
the tallest building in Europe and the northernmost skyscraper in the world.

## Construction

Construction started in 2012 and the building was completed in 2018. It serves as the headquarters of
Gazprom.
""",
)

page(
    "varso",
    "https://en.wikipedia.org/wiki/Varso_Tower",
    "Varso Tower",
    "Varso Tower - Wikipedia",
    "2024-03-17",
    """
**Varso Tower** is a skyscraper in Warsaw, Poland. With a height of 310 metres including its spire, it is
the tallest building in the European Union.

## History

The tower was topped out in 2020 and opened in 2022. It was designed by Foster + Partners.
""",
)

page(
    "curie",
    "https://www.nobelprize.org/prizes/physics/1903/marie-curie/facts/",
    "Marie Curie – Facts",
    "Marie Curie – Facts - NobelPrize.org",
    None,
    """
Marie Curie, née Skłodowska, was born in Warsaw in 1867. She shared the 1903 Nobel Prize in Physics with
Pierre Curie and Henri Becquerel for their work on radiation.

## Second prize

In 1911 she received the Nobel Prize in Chemistry for the discovery of the elements polonium and radium,
becoming the first person to win two Nobel Prizes.
""",
)

page(
    "git",
    "https://en.wikipedia.org/wiki/Git",
    "Git",
    "Git - Wikipedia",
    "2024-11-20",
    """
**Git** is a distributed version control system that tracks versions of files. It was originally created by
Linus Torvalds in April 2005 for the development of the Linux kernel.

## History

Torvalds started work on Git after the free license of BitKeeper, the tool used until then, was withdrawn.
Junio Hamano has maintained Git since July 2005.
""",
)

page(
    "rfc9114",
    "https://www.rfc-editor.org/rfc/rfc9114",
    "RFC 9114: HTTP/3",
    "RFC 9114: HTTP/3",
    "June 2022",
    """
## Abstract

The QUIC transport protocol has several features that are desirable in a transport for HTTP, such as stream
multiplexing, per-stream flow control, and low-latency connection establishment. This document describes a
mapping of HTTP semantics over QUIC.

## Status of This Memo

This is an Internet Standards Track document, published in June 2022 by the Internet Engineering Task
Force.
""",
)

page(
    "rfc9000",
    "https://www.rfc-editor.org/rfc/rfc9000",
    "RFC 9000: QUIC: A UDP-Based Multiplexed and Secure Transport",
    "RFC 9000: QUIC: A UDP-Based Multiplexed and Secure Transport",
    "May 2021",
    """
## Abstract

This document defines the core of the QUIC transport protocol. QUIC provides applications with
flow-controlled streams for structured communication, low-latency connection establishment, and network
path migration.
""",
)

page(
    "unicode16",
    "https://www.unicode.org/versions/Unicode16.0.0/",
    "Unicode 16.0.0",
    "Unicode 16.0.0",
    "2024-09-10",
    """
Unicode 16.0 adds 5,185 characters, for a total of 154,998 characters. The new additions include seven new
scripts and 7 new emoji characters.

## Release date

Version 16.0 of the Unicode Standard was released on September 10, 2024.
""",
)

page(
    "mars",
    "https://en.wikipedia.org/wiki/Mars",
    "Mars",
    "Mars - Wikipedia",
    "2024-11-15",
    """
**Mars** is the fourth planet from the Sun. It is a terrestrial planet with a thin atmosphere made mostly of
carbon dioxide.

## Distance from Earth

The distance between Earth and Mars changes as both planets orbit the Sun. At its closest it is about 54.6
million kilometres, while the average distance is about 225 million kilometres.

## Moons

Mars has two small moons, Phobos and Deimos, which may be captured asteroids.
""",
)

page(
    "zoneinfo",
    "https://docs.python.org/3/library/zoneinfo.html",
    "zoneinfo — IANA time zone support",
    "zoneinfo — IANA time zone support — Python 3.13 documentation",
    None,
    """
Added in version 3.9.

The `zoneinfo` module provides a concrete time zone implementation to support the IANA time zone database as
originally specified in PEP 615. By default, `zoneinfo` uses the system's time zone data if available.

## Using ZoneInfo

`ZoneInfo` is a concrete implementation of the `datetime.tzinfo` abstract base class, and is intended to be
attached to `tzinfo`, either via the constructor or the `datetime.replace` method.
""",
)

page(
    "pg16",
    "https://www.postgresql.org/about/news/postgresql-16-released-2715/",
    "PostgreSQL 16 Released!",
    "PostgreSQL 16 Released!",
    "2023-09-14",
    """
The PostgreSQL Global Development Group today announced the release of PostgreSQL 16, the latest version of
the world's most advanced open source database.

## Performance

PostgreSQL 16 improves the performance of existing features through new query planner optimizations, and
can run queries in parallel for full and right outer joins.

## Logical replication

This release lets standby servers act as a source for logical replication.
""",
)

page(
    "danube",
    "https://en.wikipedia.org/wiki/Danube",
    "Danube",
    "Danube - Wikipedia",
    "2024-09-30",
    """
The **Danube** is the second-longest river in Europe, after the Volga. It flows through much of Central and
Southeastern Europe, from the Black Forest into the Black Sea.

## Course

The Danube is 2,850 kilometres long and flows through ten countries, more than any other river in the
world. Four capital cities lie on its banks: Vienna, Bratislava, Budapest and Belgrade.
""",
)

page(
    "hobbit",
    "https://en.wikipedia.org/wiki/The_Hobbit",
    "The Hobbit",
    "The Hobbit - Wikipedia",
    "2024-10-12",
    """
***The Hobbit, or There and Back Again*** is a children's fantasy novel by the English author J. R. R.
Tolkien. It was published in London by George Allen & Unwin on 21 September 1937.

## Reception

The book was critically acclaimed on publication and was nominated for the Carnegie Medal.
""",
)

page(
    "everest",
    "https://en.wikipedia.org/wiki/Mount_Everest",
    "Mount Everest",
    "Mount Everest - Wikipedia",
    "2024-11-01",
    """
**Mount Everest** is Earth's highest mountain above sea level, located in the Mahalangur Himal sub-range of
the Himalayas. The China–Nepal border runs across its summit point.

## Height

Its elevation of 8,848.86 metres was most recently established in 2020 by Chinese and Nepali authorities.
""",
)

page(
    "penicillin",
    "https://www.acs.org/education/whatischemistry/landmarks/flemingpenicillin.html",
    "Discovery and Development of Penicillin",
    "Alexander Fleming Discovery and Development of Penicillin",
    None,
    """
In 1928, at St. Mary's Hospital in London, Alexander Fleming discovered penicillin, the first true
antibiotic. He noticed that a mould had killed the bacteria around it on a culture plate.

## Development

Mass production was developed during the Second World War by a team including Howard Florey and Ernst Chain.
""",
)

page(
    "iphone",
    "https://en.wikipedia.org/wiki/IPhone_(1st_generation)",
    "iPhone (1st generation)",
    "iPhone (1st generation) - Wikipedia",
    "2024-08-08",
    """
The **iPhone** (retrospectively the original iPhone) is the first smartphone designed and marketed by Apple.

## Release

Steve Jobs announced the iPhone on January 9, 2007 at the Macworld convention. It was released in the
United States on June 29, 2007.
""",
)

page(
    "sun_light",
    "https://science.nasa.gov/sun/facts/",
    "Sun: Facts",
    "Sun: Facts - NASA Science",
    "Jul 2, 2024",
    """
The Sun is a star at the centre of our solar system.

## Distance

The Sun is about 150 million kilometres from Earth. Its light takes about 8 minutes and 20 seconds to
reach us.
""",
)

page(
    "reykjavik",
    "https://en.wikipedia.org/wiki/Reykjav%C3%ADk",
    "Reykjavík",
    "Reykjavík - Wikipedia",
    "2024-09-22",
    """
**Reykjavík** is the capital and largest city of Iceland. It is located in southwestern Iceland, on the
southern shore of Faxaflói bay.

## Population

With a population of around 140,000, it is the northernmost capital of a sovereign state in the world.
""",
)

page(
    "great_wall",
    "https://en.wikipedia.org/wiki/Great_Wall_of_China",
    "Great Wall of China",
    "Great Wall of China - Wikipedia",
    "2024-10-19",
    """
The **Great Wall of China** is a series of fortifications built across the historical northern borders of
ancient Chinese states.

## Length

A comprehensive archaeological survey completed in 2012 concluded that the wall and its branches measure
21,196 kilometres.
""",
)
