"""`python examples/simple-game-server`: run the simple game server."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simple_game_server import main

sys.exit(main())
